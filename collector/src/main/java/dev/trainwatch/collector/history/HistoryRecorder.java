package dev.trainwatch.collector.history;

import static dev.trainwatch.protocol.Errors.oneLine;
import static dev.trainwatch.protocol.MonotonicClock.toInstant;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Keeps the fleet's runs and anomalies in the {@link HistoryStore} and puts them back after a restart.
 *
 * <p>Specs and anomaly episodes (rare) are queued for writing on the listener call, and a spec PUT answers once its
 * write is done ({@link #awaitWritten}). Summaries change all the time and go through a {@link SummaryWriter}, at
 * most once per interval; a SIGKILL loses at most about two intervals of them. A failing write is logged in one line
 * and never fails ingest. A finished run with a spec, a prediction and enough steps becomes a {@link RunOutcome}
 * against the raw prediction, and {@code onOutcome} recalibrates the estimator.
 *
 * <p>Lifecycle: construct, {@link #restoreInto}, add as a fleet listener, {@link #start()}; {@link #close()} after
 * the fleet has sent its last summaries.
 */
public final class HistoryRecorder implements FleetListener, AutoCloseable {
    public static final int RESTORE_LIMIT = 1_000;
    /** Specs remembered per run to tell a changed spec from a repeated one; older runs' specs are written again. */
    private static final int SPECS_REMEMBERED = 4_096;

    private final HistoryStore store;
    private final Function<RunSpec, Optional<RawPrediction>> rawPredictor;
    private final Consumer<String> log;
    private final SummaryWriter writer;
    /** Spec and anomaly writes once started: no request or alert waits for a slow database. Before (tests): inline. */
    private volatile ThreadPoolExecutor events;
    static final int EVENT_QUEUE_CAPACITY = 10_000;
    private volatile boolean dropLogged;
    /** Touched by listener calls (never overlapping) and restore. */
    private final Map<String, RunSpec> writtenSpecs = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, RunSpec> eldest) {
                    return size() > SPECS_REMEMBERED;
                }
            });

    public record RawPrediction(String gpuId, String family, double stepSeconds, long peakMemoryBytes) {
    }

    /** {@code clock} decides when a summary write is due (wall time, not the fleet's demo clock). */
    public HistoryRecorder(HistoryStore store, Function<RunSpec, Optional<RawPrediction>> rawPredictor,
                           Consumer<RunOutcome> onOutcome, Consumer<String> log, Duration summaryInterval,
                           Clock clock) {
        this.store = store;
        this.rawPredictor = rawPredictor;
        this.log = log;
        this.writer = new SummaryWriter(store, this::outcomeOf, onOutcome, summaryInterval,
                SummaryWriter.DEFAULT_CAPACITY, clock, log);
    }

    /** Until started (tests), {@code writer().flush()} writes the summaries. */
    public void start() {
        synchronized (this) {
            if (events == null) {
                events = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(EVENT_QUEUE_CAPACITY), r -> {
                            Thread t = new Thread(r, "trainwatch-history-events");
                            t.setDaemon(true);
                            return t;
                        });
            }
        }
        writer.start();
    }

    /** Waits at most {@code timeout} for the spec and anomaly writes queued before this call; whether they got done. */
    public boolean awaitWritten(Duration timeout) {
        ThreadPoolExecutor ex = events;
        if (ex == null) {
            return true;
        }
        try {
            ex.submit(() -> { }).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public SummaryWriter writer() {
        return writer;
    }

    @Override
    public void close() {
        ThreadPoolExecutor ex = events;
        if (ex != null) {
            ex.shutdown();
            try {
                if (!ex.awaitTermination(10, TimeUnit.SECONDS)) {
                    log.accept("trainwatch: history: " + ex.getQueue().size()
                            + " spec and anomaly writes not done within 10 s of shutdown");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        writer.close();
    }

    @Override
    public void onRunChanged(RunSummary summary) {
        writeSpecIfNew(summary);
        writer.changed(summary);
    }

    @Override
    public void onRunEnded(RunSummary summary) {
        writeSpecIfNew(summary);
        writer.ended(summary);
    }

    /**
     * Tried once: when the database refuses, the spec still reaches it inside the run's summary, and retrying on
     * every summary would log a line each time.
     */
    private void writeSpecIfNew(RunSummary summary) {
        RunSpec spec = summary.spec();
        if (spec == null || spec.equals(writtenSpecs.get(summary.runId()))) {
            return;
        }
        writtenSpecs.put(summary.runId(), spec);
        guarded("save run " + summary.runId(), () -> {
            Instant at = summary.lastSeenTs() != null ? toInstant(summary.lastSeenTs()) : Instant.now();
            store.saveRun(summary.runId(), json(spec), null, at);
        });
    }

    @Override
    public void onAnomalyRaised(String runId, Anomaly anomaly) {
        guarded("save anomaly of " + runId, () -> {
            // A change of severity is a new episode: close the old one first.
            store.anomalyResolved(runId, anomaly.kind().wireName(), toInstant(anomaly.since()));
            store.anomalyRaised(new StoredAnomaly(runId, anomaly.kind().wireName(), anomaly.severity().wireName(),
                    toInstant(anomaly.since()), null, anomaly.message(), anomaly.suggestion(),
                    json(anomaly.evidence())));
        });
    }

    @Override
    public void onAnomalyResolved(String runId, Anomaly anomaly) {
        guarded("save resolved anomaly of " + runId, () -> store.anomalyResolved(runId, anomaly.kind().wireName(),
                anomaly.resolvedAt() != null ? toInstant(anomaly.resolvedAt()) : Instant.now()));
    }

    /** Puts the newest stored runs back into {@code fleet}, hands each active anomaly on; how many were restored. */
    public int restoreInto(Fleet fleet, BiConsumer<String, Anomaly> activeAnomaly) {
        List<StoredRun> runs;
        try {
            runs = new ArrayList<>(store.runs(RESTORE_LIMIT));
        } catch (HistoryException e) {
            // Damage that appeared after the start's check: serve without the old runs rather than not at all.
            log.accept("trainwatch: history: cannot read the stored runs, starting without them: " + oneLine(e));
            return 0;
        }
        Collections.reverse(runs);
        int restored = 0;
        for (StoredRun run : runs) {
            try {
                RunSummary summary = withOpenEpisodes(summaryOf(run));
                fleet.restoreRun(summary);
                if (summary.spec() != null) {
                    writtenSpecs.put(summary.runId(), summary.spec());
                }
                restored++;
                if (!summary.ended() && summary.anomalies() != null) {
                    summary.anomalies().stream().filter(Anomaly::active)
                            .forEach(a -> activeAnomaly.accept(summary.runId(), a));
                }
            } catch (RuntimeException | JsonProcessingException e) {
                log.accept("trainwatch: history: cannot restore run " + run.runId() + ": " + oneLine(e));
            }
        }
        return restored;
    }

    /** Episodes are written before the summary: the episodes table says what was raised or resolved since. */
    private RunSummary withOpenEpisodes(RunSummary summary) throws JsonProcessingException {
        if (summary.ended()) {
            return summary;
        }
        List<Anomaly> anomalies = new ArrayList<>(summary.anomalies() == null ? List.of() : summary.anomalies());
        boolean changed = false;
        List<StoredAnomaly> episodes = store.anomalies(summary.runId(), RESTORE_LIMIT);
        for (StoredAnomaly episode : episodes) {
            if (episode.resolved() != null) {
                continue;
            }
            AnomalyKind kind;
            try {
                kind = AnomalyKind.fromWireName(episode.kind());
            } catch (IllegalArgumentException unknownKind) {
                continue; // written by a newer trainwatch
            }
            // Known when the summary has it active with the same severity, or has a newer episode of its kind (the
            // episode write failed). A severity changed after the summary is the episode's, not the summary's.
            boolean known = anomalies.stream().anyMatch(a -> a.kind() == kind && a.active()
                    && (a.severity().wireName().equals(episode.severity())
                            || toInstant(a.since()).isAfter(episode.since())));
            if (!known) {
                Map<String, Object> evidence = episode.evidenceJson() == null ? Map.of()
                        : Json.MAPPER.readValue(episode.evidenceJson(), new TypeReference<Map<String, Object>>() { });
                anomalies.removeIf(a -> a.kind() == kind);
                anomalies.add(new Anomaly(kind, Severity.fromWireName(episode.severity()), true,
                        episode.since().toEpochMilli() / 1000.0, null, episode.message(), evidence,
                        episode.suggestion()));
                changed = true;
            }
        }
        // The other way round: an anomaly resolved after the newest stored summary is active in the summary but
        // closed in the episodes table. It must not come back active (and fire its alert again).
        for (int i = 0; i < anomalies.size(); i++) {
            Anomaly a = anomalies.get(i);
            String kind = a.kind().wireName();
            if (!a.active() || episodes.stream().anyMatch(e -> e.kind().equals(kind) && e.resolved() == null)) {
                continue;
            }
            long sinceMs = toInstant(a.since()).toEpochMilli();
            Optional<StoredAnomaly> closed = episodes.stream()
                    .filter(e -> e.kind().equals(kind) && e.resolved() != null && e.since().toEpochMilli() >= sinceMs)
                    .findFirst();
            if (closed.isPresent()) {
                anomalies.set(i, a.resolved(closed.get().resolved().toEpochMilli() / 1000.0));
                changed = true;
            }
        }
        if (!changed) {
            return summary;
        }
        return summary.withAnomalies(List.copyOf(anomalies));
    }

    private static RunSummary summaryOf(StoredRun run) throws JsonProcessingException {
        if (run.summaryJson() != null) {
            RunSummary summary = Json.MAPPER.readValue(run.summaryJson(), RunSummary.class);
            if (run.specJson() != null) {
                // The spec column is written at once on registration; the summary may predate the newest spec.
                RunSpec spec = Json.MAPPER.readValue(run.specJson(), RunSpec.class);
                if (!spec.equals(summary.spec())) {
                    summary = summary.withSpec(spec);
                }
            }
            if (run.ended() != null && !summary.ended()) {
                return summary.asEndedAt(run.ended().toEpochMilli() / 1000.0);
            }
            return summary;
        }
        RunSpec spec = run.specJson() == null ? null : Json.MAPPER.readValue(run.specJson(), RunSpec.class);
        return new RunSummary(run.runId(), spec, run.firstSeen().toEpochMilli() / 1000.0,
                run.lastSeen().toEpochMilli() / 1000.0, run.ended() != null,
                run.ended() == null ? null : run.ended().toEpochMilli() / 1000.0, null, null, null, null, null, null,
                null, null, List.of(), List.of(), List.of(), null, null, null, null);
    }

    static final long MIN_STEPS_FOR_OUTCOME = 20;

    private Optional<RunOutcome> outcomeOf(RunSummary summary) {
        Instant at = summary.endedAt() != null ? toInstant(summary.endedAt())
                : summary.lastSeenTs() != null ? toInstant(summary.lastSeenTs()) : Instant.now();
        if (Boolean.TRUE.equals(summary.synthetic()) || summary.spec() == null || summary.stepSeconds() == null
                || summary.lastStep() == null || summary.lastStep() < MIN_STEPS_FOR_OUTCOME) {
            return Optional.empty();
        }
        return rawPredictor.apply(summary.spec()).map(raw -> new RunOutcome(summary.runId(), raw.gpuId(),
                raw.family(), raw.stepSeconds(), summary.stepSeconds(), raw.peakMemoryBytes(),
                summary.peakMemoryBytes(), at));
    }

    private void guarded(String what, Runnable action) {
        ThreadPoolExecutor ex = events;
        Runnable write = () -> {
            try {
                action.run();
            } catch (RuntimeException e) {
                log.accept("trainwatch: history: cannot " + what + ": " + oneLine(e));
            }
        };
        if (ex == null) {
            write.run();
            return;
        }
        try {
            ex.execute(write);
            dropLogged = false;
        } catch (RejectedExecutionException e) {
            if (!dropLogged) {
                dropLogged = true;
                log.accept("trainwatch: history: " + EVENT_QUEUE_CAPACITY + " writes wait for the database;"
                        + " dropping further spec and anomaly writes until it catches up (" + what + ")");
            }
        }
    }

    private static String json(Object value) {
        try {
            return Json.MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + value.getClass().getSimpleName() + ": "
                    + e.getOriginalMessage(), e);
        }
    }
}
