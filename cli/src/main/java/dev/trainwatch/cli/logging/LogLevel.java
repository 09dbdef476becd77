package dev.trainwatch.cli.logging;

import java.util.Arrays;
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

    /** The most severe of these levels that {@code level} reaches (constants in descending order), else TRACE. */
    public static String nameOf(Level level) {
        return Arrays.stream(values()).filter(candidate -> level.intValue() >= candidate.julLevel.intValue())
                .findFirst().map(LogLevel::name).orElse("TRACE");
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
