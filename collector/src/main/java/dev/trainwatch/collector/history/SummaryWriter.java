package dev.trainwatch.collector.history;

import static dev.trainwatch.protocol.Errors.oneLine;
import static dev.trainwatch.protocol.MonotonicClock.toInstant;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Writes run summaries to the {@link HistoryStore} on its own thread, so the fleet's listener call only puts the
 * summary in a map. A run's newer summary replaces its pending one; pending summaries are written at most once per
 * {@code interval}, in one transaction; an ended run is written (with its calibration outcome) as soon as the thread
 * wakes.
 *
 * <p>Bounded: at most {@code capacity} runs wait. A refused batch stays pending and is retried every interval (at
 * most once a second); summaries of further runs are dropped meanwhile. Each state is logged once when it starts and
 * ends, never per write. Thread-safe; {@link #close()} writes what is pending and is idempotent.
 */
public final class SummaryWriter implements AutoCloseable {
    /** Runs whose summaries may wait to be written at once (the fleet tracks at most 1,024 by default). */
    public static final int DEFAULT_CAPACITY = 4_096;
    private static final long MIN_RETRY_MILLIS = 1_000;
    private static final long CLOSE_WAIT_MS = 10_000;

    private final HistoryStore store;
    private final Function<RunSummary, Optional<RunOutcome>> outcomeOf;
    private final Consumer<RunOutcome> onOutcome;
    private final long intervalMillis;
    private final int capacity;
    private final Clock clock;
    private final Consumer<String> log;

    private final Object lock = new Object();
    /** Serialises writes, so batches reach the database in the order they were taken. */
    private final Object writeLock = new Object();
    // Guarded by lock.
    private final Map<String, RunSummary> changed = new LinkedHashMap<>();
    private final ArrayDeque<RunSummary> ended = new ArrayDeque<>();
    private long lastWriteMillis = Long.MIN_VALUE;
    private boolean failing;
    private boolean dropping;
    private boolean closed;
    private long writes;
    private long summariesWritten;
    private long dropped;
    private long failedWrites;
    private Thread thread;

    /** {@code interval}: 0 to 60 s, as CollectorConfig allows; {@code capacity}: at least 1. */
    public SummaryWriter(HistoryStore store, Function<RunSummary, Optional<RunOutcome>> outcomeOf,
                         Consumer<RunOutcome> onOutcome, Duration interval, int capacity, Clock clock,
                         Consumer<String> log) {
        this.store = store;
        this.outcomeOf = outcomeOf;
        this.onOutcome = onOutcome;
        this.intervalMillis = interval.toMillis();
        this.capacity = capacity;
        this.clock = clock;
        this.log = log;
    }

    public record Stats(long writes, long summariesWritten, long pending, long dropped, long failedWrites) {
    }

    public void start() {
        synchronized (lock) {
            if (thread != null || closed) {
                return;
            }
            thread = new Thread(this::loop, "trainwatch-history-writer");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** Replaces the run's pending summary. Never blocks on the database. */
    public void changed(RunSummary summary) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (!changed.containsKey(summary.runId()) && !hasRoom()) {
                drop(summary.runId());
                return;
            }
            changed.put(summary.runId(), summary);
            lock.notifyAll();
        }
    }

    /** Written as soon as possible, with its outcome. Never blocks on the database. */
    public void ended(RunSummary summary) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            // The ended summary supersedes a pending one; the pending one must not be written after it.
            boolean freed = changed.remove(summary.runId()) != null;
            if (!freed && !hasRoom()) {
                drop(summary.runId());
                return;
            }
            ended.add(summary);
            lock.notifyAll();
        }
    }

    /** Whether a write was due and attempted. */
    public boolean flushIfDue() {
        return flush(false);
    }

    public void flush() {
        flush(true);
    }

    public Stats stats() {
        synchronized (lock) {
            return new Stats(writes, summariesWritten, changed.size() + ended.size(), dropped, failedWrites);
        }
    }

    @Override
    public void close() {
        Thread running;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            running = thread;
            lock.notifyAll();
        }
        if (running != null) {
            try {
                running.join(CLOSE_WAIT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        flush(true);
    }

    private boolean flush(boolean force) {
        synchronized (writeLock) {
            List<RunSummary> endedBatch;
            List<RunSummary> changedBatch;
            long now = clock.millis();
            synchronized (lock) {
                if (changed.isEmpty() && ended.isEmpty()) {
                    return false;
                }
                if (!force && !due(now)) {
                    return false;
                }
                endedBatch = new ArrayList<>(ended);
                changedBatch = new ArrayList<>(changed.values());
                ended.clear();
                changed.clear();
                lastWriteMillis = now;
            }
            write(endedBatch, changedBatch);
            return true;
        }
    }

    /** Guarded by lock. */
    private boolean due(long now) {
        if (!ended.isEmpty() && !failing) {
            return true;
        }
        // A wall clock stepped back (NTP, a VM resumed) would otherwise hold every write until it caught up again.
        return lastWriteMillis == Long.MIN_VALUE || now < lastWriteMillis
                || now - lastWriteMillis >= currentIntervalMillis();
    }

    private long currentIntervalMillis() {
        return failing ? Math.max(intervalMillis, MIN_RETRY_MILLIS) : intervalMillis;
    }

    private void write(List<RunSummary> endedBatch, List<RunSummary> changedBatch) {
        List<HistoryStore.SummaryWrite> rows = new ArrayList<>(endedBatch.size() + changedBatch.size());
        List<RunOutcome> outcomes = new ArrayList<>();
        // Ended runs first: a run reopened after its end has its newer summary among the changed ones.
        for (RunSummary s : endedBatch) {
            addRow(rows, s);
            try {
                outcomeOf.apply(s).ifPresent(outcomes::add);
            } catch (RuntimeException e) {
                log.accept("trainwatch: history: no calibration outcome for run " + s.runId() + ": " + oneLine(e));
            }
        }
        for (RunSummary s : changedBatch) {
            addRow(rows, s);
        }
        try {
            store.writeSummaries(rows, outcomes);
        } catch (RuntimeException e) {
            failed(endedBatch, changedBatch, e);
            return;
        }
        boolean recovered;
        long failures;
        synchronized (lock) {
            writes++;
            summariesWritten += rows.size();
            recovered = failing;
            failures = failedWrites;
            failing = false;
            dropping = false;
        }
        if (recovered) {
            log.accept("trainwatch: history: writing run summaries again (" + failures + " failed write(s) so far)");
        }
        for (RunOutcome outcome : outcomes) {
            try {
                onOutcome.accept(outcome);
            } catch (RuntimeException e) {
                log.accept("trainwatch: history: cannot use the outcome of run " + outcome.runId() + ": "
                        + oneLine(e));
            }
        }
    }

    private void failed(List<RunSummary> endedBatch, List<RunSummary> changedBatch, RuntimeException e) {
        boolean first;
        synchronized (lock) {
            failedWrites++;
            first = !failing;
            failing = true;
            for (int i = endedBatch.size() - 1; i >= 0; i--) {
                RunSummary s = endedBatch.get(i);
                if (hasRoom()) {
                    ended.addFirst(s);
                } else {
                    drop(s.runId());
                }
            }
            for (RunSummary s : changedBatch) {
                boolean superseded = changed.containsKey(s.runId())
                        || ended.stream().anyMatch(x -> x.runId().equals(s.runId()));
                if (superseded) {
                    continue;
                }
                if (hasRoom()) {
                    changed.put(s.runId(), s);
                } else {
                    drop(s.runId());
                }
            }
        }
        if (first) {
            log.accept("trainwatch: history: cannot write " + (endedBatch.size() + changedBatch.size())
                    + " run summaries, keeping them in memory (at most " + capacity + " runs) and retrying every "
                    + Math.max(intervalMillis, MIN_RETRY_MILLIS) + " ms: " + oneLine(e));
        }
    }

    /** Guarded by lock. */
    private boolean hasRoom() {
        return changed.size() + ended.size() < capacity;
    }

    /** Guarded by lock. */
    private void drop(String runId) {
        dropped++;
        if (!dropping) {
            dropping = true;
            log.accept("trainwatch: history: " + capacity + " runs already wait to be written (the database is slow"
                    + " or refusing writes): dropping the summary of run " + runId + " and of further new runs"
                    + " until a write succeeds");
        }
    }

    private void loop() {
        while (true) {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                long wait = waitMillis(clock.millis());
                if (wait > 0) {
                    try {
                        lock.wait(wait == Long.MAX_VALUE ? 0 : wait);
                    } catch (InterruptedException e) {
                        return; // close() writes what is left
                    }
                    continue;
                }
            }
            try {
                flush(false);
            } catch (RuntimeException e) {
                // A bug in encoding must not end the thread: the next change retries.
                log.accept("trainwatch: history: writer failed: " + oneLine(e));
            }
        }
    }

    /** Guarded by lock. */
    private long waitMillis(long now) {
        if (changed.isEmpty() && ended.isEmpty()) {
            return Long.MAX_VALUE;
        }
        if (due(now)) {
            return 0;
        }
        return Math.max(1, lastWriteMillis + currentIntervalMillis() - now);
    }

    /** A summary that cannot be encoded is logged and left out: retrying it would fail the same way forever. */
    private void addRow(List<HistoryStore.SummaryWrite> rows, RunSummary s) {
        String json;
        try {
            json = Json.MAPPER.writeValueAsString(s);
        } catch (JsonProcessingException e) {
            log.accept("trainwatch: history: cannot encode the summary of run " + s.runId() + ": "
                    + e.getOriginalMessage());
            return;
        }
        Instant firstSeen = toInstant(s.firstSeenTs());
        Instant lastSeen = s.lastSeenTs() != null ? toInstant(s.lastSeenTs()) : firstSeen;
        Instant endedAt = !s.ended() ? null : s.endedAt() != null ? toInstant(s.endedAt()) : lastSeen;
        rows.add(new HistoryStore.SummaryWrite(s.runId(), json, firstSeen, lastSeen, endedAt));
    }
}
