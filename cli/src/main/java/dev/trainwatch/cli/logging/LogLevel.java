package dev.trainwatch.cli.logging;

import java.util.Locale;
import java.util.logging.Level;

/**
 * The levels a user can ask for with {@code --log-level}, and the names records carry. {@link System.Logger}
 * levels (what trainwatch's code logs through) map onto java.util.logging's as the JDK maps them.
 */
public enum LogLevel {
    ERROR(Level.SEVERE),
    WARN(Level.WARNING),
    INFO(Level.INFO),
    DEBUG(Level.FINE);

    private final Level julLevel;

    LogLevel(Level julLevel) {
        this.julLevel = julLevel;
    }

    /** The java.util.logging threshold that lets this level and everything more severe through. */
    public Level julLevel() {
        return julLevel;
    }

    /** The name a record of this java.util.logging level is written with: ERROR, WARN, INFO, DEBUG or TRACE. */
    public static String nameOf(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "ERROR";
        }
        if (v >= Level.WARNING.intValue()) {
            return "WARN";
        }
        if (v >= Level.INFO.intValue()) {
            return "INFO";
        }
        if (v >= Level.FINE.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
