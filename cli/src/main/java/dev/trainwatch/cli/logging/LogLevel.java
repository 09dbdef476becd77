package dev.trainwatch.cli.logging;

import java.util.Locale;
import java.util.logging.Level;

/** The levels of {@code --log-level}, and the names records carry, mapped onto java.util.logging's as the JDK does. */
public enum LogLevel {
    ERROR(Level.SEVERE),
    WARN(Level.WARNING),
    INFO(Level.INFO),
    DEBUG(Level.FINE);

    private final Level julLevel;

    LogLevel(Level julLevel) {
        this.julLevel = julLevel;
    }

    public Level julLevel() {
        return julLevel;
    }

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
