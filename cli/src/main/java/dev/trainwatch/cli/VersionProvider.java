package dev.trainwatch.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** The version line from the Maven-filtered version and build-time commit files, e.g. {@code trainwatch 0.1.0 (commit 3762b70a1c2e)}. */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        Properties version = read("/trainwatch-version.properties");
        Properties commit = read("/trainwatch-commit.properties");
        return new String[] {line(version.getProperty("version", "unknown"), commit.getProperty("commit"))};
    }

    static String line(String version, String commit) {
        return "trainwatch " + version + (commit == null || commit.isBlank() ? "" : " (commit " + commit + ")");
    }

    private static Properties read(String resource) {
        Properties properties = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream(resource)) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            // fall through to "unknown": a version string is not worth failing for
        }
        return properties;
    }
}
