package dev.trainwatch.cli.logging;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Handler;
import java.util.logging.LogRecord;

/**
 * The one log handler: every record one line on one stream, repeats held back by a {@link RepeatLimiter} and counted
 * for {@link LogMetrics}. A timer writes held-back counts only while one is held (a periodic one woke the agent for
 * nothing). Closing leaves the stream open: other shutdown hooks may still log.
 */
public final class LogOutput extends Handler {
    private final PrintStream out;
    private final LogFormat format;
    private final RepeatLimiter limiter;
    private final Map<String, LongAdder> records = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> suppressed = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;
    private final Clock clock;
    /** The summary set for when a held-back interval ends; null when none is. Guarded by {@code this}. */
    private ScheduledFuture<?> pendingSummary;

    LogOutput(PrintStream out, LogFormat format, Clock clock, boolean withTimer) {
        this.out = out;
        this.format = format;
        this.clock = clock;
        this.limiter = new RepeatLimiter(clock);
        if (withTimer) {
            // Its thread starts with the first summary set: a process that repeats nothing never has it.
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "trainwatch-log-repeats");
                t.setDaemon(true);
                return t;
            });
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
            setSummary();
        }
        write(offer.lines());
    }

    /** Writes the counts of intervals that are over (the timer calls this; tests call it with their clock). */
    void writeExpired() {
        write(limiter.expire());
    }

    /** True while a summary is set for a held-back count (tests). */
    synchronized boolean summarySet() {
        return pendingSummary != null;
    }

    /** Sets the timer for the end of the first interval that holds a count back, unless it is set already. */
    private synchronized void setSummary() {
        if (timer == null || pendingSummary != null) {
            return;
        }
        Instant due = limiter.firstHeldBackEnd();
        if (due == null) {
            return;
        }
        // At most one interval away: a clock stepped back does not put the count off by the step.
        long delay = Math.min(RepeatLimiter.INTERVAL.toMillis(),
                Math.max(0, Duration.between(clock.instant(), due).toMillis())) + SUMMARY_SLACK_MS;
        try {
            pendingSummary = timer.schedule(this::summaryDue, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // closing: close() drains what is held back
        }
    }

    /** Past an interval's end the count goes out; later intervals that hold counts back set the timer again. */
    static final long SUMMARY_SLACK_MS = 200;

    private void summaryDue() {
        synchronized (this) {
            pendingSummary = null;
        }
        writeExpired();
        setSummary();
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
