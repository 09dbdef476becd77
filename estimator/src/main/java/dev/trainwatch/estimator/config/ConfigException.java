package dev.trainwatch.estimator.config;

import dev.trainwatch.estimator.InvalidSpecException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** A training config that cannot be read: one line naming the file, the line (when known) and why. */
public class ConfigException extends InvalidSpecException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    public ConfigException(Path file, int line, String why) {
        super(file + (line > 0 ? ":" + line : "") + ": " + why);
        this.reason = why;
    }

    /** Why, without the file and line. */
    public String reason() {
        return reason;
    }

    static String unreadable(IOException e) {
        return e instanceof AccessDeniedException ? "permission denied"
                : e instanceof NoSuchFileException ? "no such file" : "cannot be read: " + e.getMessage();
    }
}
