package dev.trainwatch.cli.logging;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.LogRecord;

/**
 * Keeps a repeated record from flooding the log: the first of a kind in an interval is written, the rest counted
 * into one line (with the last of them) when the interval is over. A kind is the logger, the level and the message
 * <em>pattern</em> before its parameters; beyond {@link #MAX_KINDS} the oldest is closed early. Thread-safe.
 */
final class RepeatLimiter {
    /** One minute: {@link LogLine#text} says "in the last minute". */
    static final Duration INTERVAL = Duration.ofMinutes(1);
    static final int MAX_KINDS = 512;

    private final Clock clock;
    private final Map<Kind, Window> windows = new LinkedHashMap<>();

    RepeatLimiter(Clock clock) {
        this.clock = clock;
    }

    record Offer(List<LogLine> lines, boolean suppressed) {}

    private record Kind(String logger, int level, String pattern) {
        static Kind of(LogRecord record) {
            return new Kind(record.getLoggerName(), record.getLevel().intValue(),
                    record.getMessage() == null ? "" : record.getMessage());
        }
    }

    private static final class Window {
        final Instant start;
        long suppressed;
        LogRecord last;

        Window(Instant start) {
            this.start = start;
        }
    }

    synchronized Offer offer(LogRecord record) {
        Instant now = clock.instant();
        Kind kind = Kind.of(record);
        Window window = windows.get(kind);
        if (window != null && open(window, now)) {
            window.suppressed++;
            window.last = record;
            return new Offer(List.of(), true);
        }
        List<LogLine> lines = new ArrayList<>(2);
        if (window != null) {
            windows.remove(kind);
            summary(window, lines);
        }
        if (windows.size() >= MAX_KINDS) {
            lines.addAll(expire());
            if (windows.size() >= MAX_KINDS) {
                Iterator<Window> oldest = windows.values().iterator();
                summary(oldest.next(), lines);
                oldest.remove();
            }
        }
        windows.put(kind, new Window(now));
        lines.add(LogLine.of(record, 0));
        return new Offer(lines, false);
    }

    synchronized List<LogLine> expire() {
        Instant now = clock.instant();
        List<LogLine> lines = new ArrayList<>();
        for (Iterator<Window> it = windows.values().iterator(); it.hasNext(); ) {
            Window window = it.next();
            if (!open(window, now)) {
                summary(window, lines);
                it.remove();
            }
        }
        return lines;
    }

    /** Closes every interval now (at shutdown). */
    synchronized List<LogLine> drain() {
        List<LogLine> lines = new ArrayList<>();
        windows.values().forEach(window -> summary(window, lines));
        windows.clear();
        return lines;
    }

    synchronized Instant firstHeldBackEnd() {
        return windows.values().stream().filter(window -> window.suppressed > 0).map(window -> window.start)
                .min(Comparator.naturalOrder()).map(start -> start.plus(INTERVAL)).orElse(null);
    }

    synchronized int trackedKinds() {
        return windows.size();
    }

    private static boolean open(Window window, Instant now) {
        // A clock stepped back keeps the window open no longer than the interval from the step.
        Duration age = Duration.between(window.start, now);
        return !age.isNegative() && age.compareTo(INTERVAL) < 0;
    }

    private static void summary(Window window, List<LogLine> lines) {
        if (window.suppressed > 0) {
            lines.add(LogLine.of(window.last, window.suppressed));
        }
    }
}
