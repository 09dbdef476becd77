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
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The one log handler of a trainwatch process: every record becomes one line (text or JSON), with repeats held back
 * by a {@link RepeatLimiter}. A timer, set only while a count is held back (a periodic one woke the agent for
 * nothing), writes the counts of intervals that ended quietly. Closing writes what is held back but leaves the
 * stream open: the JDK closes handlers at shutdown while other hooks may still log.
 */
public final class LogOutput extends Handler {
    private final PrintStream out;
    private final LogFormat format;
    private final RepeatLimiter limiter;
    private final Map<String, LongAdder> records = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> suppressed = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;
    private final Clock clock;
    /** Guarded by {@code this}. */
    private ScheduledFuture<?> pendingSummary;

    LogOutput(PrintStream out, LogFormat format, Clock clock, boolean withTimer) {
        this.out = out;
        this.format = format;
        this.clock = clock;
        this.limiter = new RepeatLimiter(clock);
        if (withTimer) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "trainwatch-log-repeats");
                t.setDaemon(true);
                return t;
            });
        } else {
            timer = null;
        }
    }

    /** Sets up logging once, in {@code main}: this one handler instead of java.util.logging's two-line default. */
    public static LogOutput configure(LogFormat format, LogLevel level, PrintStream out) {
        LogOutput output = new LogOutput(out, format, Clock.systemUTC(), true);
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        root.setLevel(level.julLevel());
        output.setLevel(level.julLevel());
        root.addHandler(output);
        return output;
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

    void writeExpired() {
        write(limiter.expire());
    }

    synchronized boolean summarySet() {
        return pendingSummary != null;
    }

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
            out.println(format == LogFormat.JSON ? line.json() : line.text());
        }
        if (!lines.isEmpty()) {
            out.flush();
        }
    }

    /** Records of this level seen, written or not. */
    public long records(String level) {
        return records.getOrDefault(level, new LongAdder()).sum();
    }

    /** Records of this level held back as repeats. */
    public long suppressed(String level) {
        return suppressed.getOrDefault(level, new LongAdder()).sum();
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
