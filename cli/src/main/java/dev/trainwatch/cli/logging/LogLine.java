package dev.trainwatch.cli.logging;

import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * One log record reduced to single-line text; {@code repeated} counts records of its kind held back in the interval
 * this line closes (0 for an ordinary line).
 */
record LogLine(Instant time, String level, String component, String message, String error, long repeated) {
    private static final String PREFIX = "dev.trainwatch.";
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

    /** {@code dev.trainwatch.collector.state.Fleet} becomes {@code collector.state.Fleet}; others stay as named. */
    static String component(String loggerName) {
        if (loggerName == null || loggerName.isEmpty()) {
            return "trainwatch";
        }
        return loggerName.startsWith(PREFIX) ? loggerName.substring(PREFIX.length()) : loggerName;
    }

    /** Line breaks become " | ", other controls a space. */
    static String singleLine(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(text.length());
        String stripped = text.strip();
        for (int i = 0; i < stripped.length(); i++) {
            char c = stripped.charAt(i);
            if (c == '\r') {
                continue;
            }
            if (c == '\n') {
                out.append(" | ");
            } else if (Character.isISOControl(c)) {
                out.append(' ');
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
