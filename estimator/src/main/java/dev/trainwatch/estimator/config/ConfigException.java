package dev.trainwatch.estimator.config;

import dev.trainwatch.estimator.InvalidSpecException;
import java.nio.file.Path;

/** A training config that cannot be read: one line naming the file, the line (when known) and why. */
public class ConfigException extends InvalidSpecException {
    private static final long serialVersionUID = 1L;

    public ConfigException(Path file, int line, String why) {
        super(file + (line > 0 ? ":" + line : "") + ": " + why);
    }
}
