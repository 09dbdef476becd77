package dev.trainwatch.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** Reads the version Maven filtered into {@code trainwatch-version.properties}. */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        Properties properties = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("/trainwatch-version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            // fall through to "unknown": a version string is not worth failing for
        }
        return new String[] {"trainwatch " + properties.getProperty("version", "unknown")};
    }
}
