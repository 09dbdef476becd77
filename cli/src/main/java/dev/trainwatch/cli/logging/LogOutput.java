package dev.trainwatch.cli.logging;

import java.io.PrintStream;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Handler;
import java.util.logging.LogRecord;

/**
 * The one log handler of a trainwatch process: every record becomes one line (text or JSON) on one stream, with
 * repeats held back by a {@link RepeatLimiter} and counted per level for {@link LogMetrics}. A daemon timer writes
 * the counts of intervals that ended while nothing else was logged. Closing writes what is still held back; the
 * stream itself (stderr) stays open, because the JDK closes handlers at shutdown while other shutdown hooks may
 * still log.
 */
public final class LogOutput extends Handler {
    private final PrintStream out;
    private final LogFormat format;
    private final RepeatLimiter limiter;
    private final Map<String, LongAdder> records = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> suppressed = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    LogOutput(PrintStream out, LogFormat format, Clock clock, boolean withTimer) {
        this.out = out;
        this.format = format;
        this.limiter = new RepeatLimiter(clock);
        if (withTimer) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "trainwatch-log-repeats");
                t.setDaemon(true);
                return t;
            });
            timer.scheduleWithFixedDelay(this::writeExpired, 5, 5, TimeUnit.SECONDS);
        } else {
            timer = null;
        }
    }

    @Override
    public void publish(LogRecord record) {
        if (record == null || !isLoggable(record)) {
            return;
        }
        String level = LogLevel.nameOf(record.getLevel());
        records.computeIfAbsent(level, k -> new LongAdder()).increment();
        RepeatLimiter.Offer offer = limiter.offer(record);
        if (offer.suppressed()) {
            suppressed.computeIfAbsent(level, k -> new LongAdder()).increment();
        }
        write(offer.lines());
    }

    /** Writes the counts of intervals that are over (the timer calls this; tests call it with their clock). */
    void writeExpired() {
        write(limiter.expire());
    }

    private synchronized void write(List<LogLine> lines) {
        for (LogLine line : lines) {
            out.println(format == LogFormat.JSON ? JsonLineFormatter.format(line) : OneLineFormatter.format(line));
        }
        if (!lines.isEmpty()) {
            out.flush();
        }
    }

    /** Records of this level ({@code ERROR}, {@code WARN}, {@code INFO}, {@code DEBUG}) seen, written or not. */
    public long records(String level) {
        LongAdder count = records.get(level);
        return count == null ? 0 : count.sum();
    }

    /** Records of this level held back as repeats (counted in a later line instead of written). */
    public long suppressed(String level) {
        LongAdder count = suppressed.get(level);
        return count == null ? 0 : count.sum();
    }

    @Override
    public void flush() {
        out.flush();
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        write(limiter.drain());
    }
}
