package dev.trainwatch.cli.logging;

import static java.time.format.DateTimeFormatter.ISO_INSTANT;

import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * {@code 2026-11-24T04:40:01.123Z WARN  collector.state.Fleet: run limit 1,024 reached: ...} — the same text on a
 * terminal and under journald (which adds its own time but keeps ours for ordering across hosts).
 */
final class OneLineFormatter {
    private OneLineFormatter() {}

    static String format(LogLine line) {
        StringBuilder out = new StringBuilder(96 + line.message().length());
        out.append(ISO_INSTANT.format(line.time().truncatedTo(ChronoUnit.MILLIS))).append(' ').append(line.level());
        for (int i = line.level().length(); i < 5; i++) {
            out.append(' '); // %-5s
        }
        out.append(' ').append(line.component()).append(": ").append(line.message());
        if (line.error() != null) {
            out.append(" (").append(line.error()).append(')');
        }
        if (line.repeated() > 0) {
            out.append(String.format(Locale.ROOT, " [%,d records like this in the last %s; this is the last]", line.repeated(),
                    RepeatLimiter.describeInterval()));
        }
        return out.toString();
    }
}
