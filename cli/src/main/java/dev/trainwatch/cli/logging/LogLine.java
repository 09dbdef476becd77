package dev.trainwatch.cli.logging;

import static java.time.format.DateTimeFormatter.ISO_INSTANT;

import dev.trainwatch.protocol.wire.WireCodec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;
import java.util.regex.Pattern;

/**
 * One log record reduced to single-line text; {@code repeated} counts records of its kind held back in the interval
 * this line closes (0 for an ordinary line).
 */
record LogLine(Instant time, String level, String component, String message, String error, long repeated) {
    private static final String PREFIX = "dev.trainwatch.";
    /** What {@link Character#isISOControl} matches. */
    private static final Pattern CONTROLS = Pattern.compile("[\\x00-\\x1F\\x7F-\\x9F]");
    private static final Formatter MESSAGE = new Formatter() {
        @Override
        public String format(LogRecord record) {
            return formatMessage(record);
        }
    };

    static LogLine of(LogRecord record, long repeated) {
        Throwable thrown = record.getThrown();
        String error = null;
        if (thrown != null) {
            error = thrown.getClass().getSimpleName()
                    + (thrown.getMessage() == null ? "" : ": " + singleLine(thrown.getMessage()));
        }
        return new LogLine(record.getInstant(), LogLevel.nameOf(record.getLevel()), component(record.getLoggerName()),
                singleLine(MESSAGE.formatMessage(record)), error, repeated);
    }

    /**
     * {@code 2026-11-24T04:40:01.123Z WARN  collector.state.Fleet: run limit 1,024 reached: ...} — the same text on a
     * terminal and under journald (which adds its own time but keeps ours for ordering across hosts).
     */
    String text() {
        StringBuilder out = new StringBuilder(96 + message.length());
        out.append(ISO_INSTANT.format(time.truncatedTo(ChronoUnit.MILLIS))).append(' ').append(level)
                .append(" ".repeat(Math.max(1, 6 - level.length()))).append(component).append(": ").append(message);
        if (error != null) {
            out.append(" (").append(error).append(')');
        }
        if (repeated > 0) {
            out.append(String.format(Locale.ROOT, " [%,d records like this in the last minute; this is the last]",
                    repeated));
        }
        return out.toString();
    }

    /**
     * One JSON object with the fields log shippers (Loki, Elasticsearch) index. Written with {@link WireCodec}: an
     * agent logging JSON loads no jackson-databind.
     */
    String json() {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("time", ISO_INSTANT.format(time.truncatedTo(ChronoUnit.MILLIS)));
        fields.put("level", level);
        fields.put("component", component);
        fields.put("message", message);
        if (error != null) {
            fields.put("error", error);
        }
        if (repeated > 0) {
            fields.put("repeated", repeated);
            fields.put("repeated_interval_seconds", RepeatLimiter.INTERVAL.toSeconds());
        }
        return new String(WireCodec.toBytes(fields), StandardCharsets.UTF_8);
    }

    /** {@code dev.trainwatch.collector.state.Fleet} becomes {@code collector.state.Fleet}; others stay as named. */
    static String component(String loggerName) {
        if (loggerName == null || loggerName.isEmpty()) {
            return "trainwatch";
        }
        return loggerName.startsWith(PREFIX) ? loggerName.substring(PREFIX.length()) : loggerName;
    }

    /** Line breaks become " | ", other controls a space. */
    static String singleLine(String text) {
        return text == null ? ""
                : CONTROLS.matcher(text.strip().replace("\r", "").replace("\n", " | ")).replaceAll(" ");
    }
}
