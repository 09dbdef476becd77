package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Detectors;
import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.HostMemoryView;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.state.window.GpuWindow;
import dev.trainwatch.collector.state.window.RankWindows;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.estimator.plan.RunPlans;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.MonotonicClock;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.DoubleUnaryOperator;
import java.util.function.Supplier;

/**
 * The collector's in-memory picture of the fleet (GPUs by UUID, agents, runs, their windows, estimates and
 * anomalies): the lock and the public API. Every public method is thread-safe; changes happen under one lock, and
 * the parts behind it ({@link Registry}, {@link BatchIngest}, {@link StepIngest}, {@link SpecBinding},
 * {@link EvaluationSchedule}, {@link RunObservations}) are only called under it. Listeners hear of changes after the
 * lock is released, in order ({@link Outbox}). Views returned are immutable snapshots.
 */
public final class Fleet {

    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);

    private final Clock clock;
    private final FleetSettings settings;
    private final DetectorSettings detectorSettings;

    private final Object lock = new Object();
    private final Registry registry;
    private final RunObservations observations;
    private final Outbox outbox = new Outbox();
    private final EvaluationSchedule events;
    private final SpecBinding specs;
    private final BatchIngest batches;
    private final StepIngest steps;
    private final Predictor predictor;
    private volatile GpuHourPrices prices = GpuHourPrices.NONE;

    public Fleet(Predictor predictor, Clock clock, FleetSettings settings, DetectorSettings detectorSettings) {
        this(predictor, clock, settings, detectorSettings, Detectors.all(detectorSettings));
    }

    /** With these detectors instead of every one (tests). */
    Fleet(Predictor predictor, Clock clock, FleetSettings settings, DetectorSettings detectorSettings,
          List<Detector> detectors) {
        this.predictor = Objects.requireNonNull(predictor, "predictor");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.detectorSettings = Objects.requireNonNull(detectorSettings, "detectorSettings");
        this.registry = new Registry(settings, detectorSettings);
        this.observations = new RunObservations(predictor, registry);
        this.events = new EvaluationSchedule(registry, List.copyOf(detectors), predictor, observations, outbox);
        this.specs = new SpecBinding(registry, predictor, events);
        this.batches = new BatchIngest(registry, events, specs);
        this.steps = new StepIngest(registry, observations, events);
    }

    /** A fleet with default limits and thresholds over the real estimator. */
    public static Fleet create(Estimator estimator, Clock clock) {
        return new Fleet(Predictor.of(estimator), clock, FleetSettings.defaults(), DetectorSettings.defaults());
    }

    /** Sets what one GPU-hour costs ({@code --gpu-hour-price}): runs then show their cost so far and projected. */
    public void gpuHourPrices(GpuHourPrices prices) {
        synchronized (lock) {
            observations.prices(prices);
            this.prices = prices;
        }
    }

    /** The run re-priced on other hardware ({@code GET /v1/runs/{id}/plans}); the pricing runs outside the lock. */
    public Optional<RunPlans.RunResult> plans(String runId, List<String> gpuIds, Integer gpus, Integer batch) {
        Optional<RunView> view = run(runId);
        return view.map(v -> RunRepricing.forRun(predictor, v, gpuIds, gpus, batch, prices));
    }

    public void addListener(FleetListener listener) {
        outbox.addListener(listener);
    }

    /** Listeners are called on the fleet's own thread from now on, so that no caller waits for one. */
    public void deliverOnOwnThread() {
        outbox.startOwnThread();
    }

    /** Waits at most {@code timeout} until listeners have been told everything before this call; false if late. */
    public boolean awaitListeners(Duration timeout) {
        return outbox.awaitDelivered(timeout);
    }

    /** Delivers what listeners have not been told yet (at most {@code timeout}), then stops the outbox's thread. */
    public void stopDelivery(Duration timeout) {
        outbox.stop(timeout);
    }

    /** Notifications queued for listeners and not yet delivered. */
    public long listenerBacklog() {
        return outbox.backlog();
    }

    /** How often each detector threw since start, by anomaly kind (only those that did); never waits for the lock. */
    public Map<String, Long> detectorErrors() {
        return events.detectorErrors();
    }

    /** Evaluations and their seconds per detector since start, by anomaly kind (thread-safe, without the lock). */
    public Map<String, DetectorCost.Total> detectorCosts() {
        return events.detectorCosts();
    }

    /** How many runs, GPUs and agents are tracked: read without the lock, never waits. */
    public record Counts(int runs, int gpus, int agents) {
    }

    public Counts counts() {
        return new Counts(registry.runCount(), registry.gpuCount(), registry.agentCount());
    }

    /** A refusal this recent makes {@code /healthz} say {@code refusing}: an agent retries within a minute or so. */
    public static final double REFUSING_SECONDS = 120;

    /** Limit labels that refused something in the last {@link #REFUSING_SECONDS} (for {@code /healthz}); lock-free. */
    public List<String> refusing() {
        double now = now();
        return Arrays.stream(Slots.Kind.values()).filter(kind -> kind != Slots.Kind.RANKS
                && now - registry.slots.lastRefused(kind) < REFUSING_SECONDS).map(Slots.Kind::label).toList();
    }

    /**
     * Registers (or replaces) a run's spec and prices it; a missing GPU or data-parallel size is taken from the run's
     * attributed GPUs. Throws {@link InvalidSpecException} (the run left unchanged) when it cannot be priced.
     */
    public RunView putSpec(String runId, RunSpec spec) {
        requireId(runId);
        Objects.requireNonNull(spec, "spec");
        return changing(() -> {
            double now = now();
            return observations.view(specs.put(runId, spec, now), now);
        });
    }

    /** What a node sharing its agent id with other nodes (a cloned image) is told; empty when it shares none. */
    public Optional<String> agentIdClash(String agentId, String host) {
        synchronized (lock) {
            return batches.clones.clashOf(agentId, host);
        }
    }

    /** Applies an agent batch: GPU samples, run attribution, events and the steps it carries. */
    public IngestResult ingestBatch(AgentBatch batch) {
        return ingestBatch(batch, null);
    }

    /**
     * The same, with the agent-clock time the request was sent ({@code Trainwatch-Sent-At}, or null): the clock offset
     * is estimated from it instead of {@code sent_at}, since a batch replayed from the spool was made long before.
     */
    public IngestResult ingestBatch(AgentBatch batch, Double requestSentAt) {
        Objects.requireNonNull(batch, "batch");
        if (batch.agentId() == null || batch.agentId().isBlank() || batch.host() == null || batch.host().isBlank()) {
            throw new IllegalArgumentException("agent_id and host are required");
        }
        return changing(() -> {
            double now = now();
            double wallOffset = MonotonicClock.wallOffsetSeconds(clock);
            Set<RunState> toJudge = new LinkedHashSet<>();
            IngestResult result = batches.apply(batch, requestSentAt, now, wallOffset, toJudge);
            if (!result.duplicate() && batch.runSteps() != null) {
                result = applyBatchSteps(batch, requestSentAt, result, now, wallOffset, toJudge);
            }
            // Judged once per run on readings and steps together; urgent (at once, even on several nodes): an event,
            // a non-finite loss, or a busy GPU slowed down in hardware.
            DetectorSettings.Throttling throttling = detectorSettings.throttling();
            boolean urgent = batch.events() != null && !batch.events().isEmpty()
                    || GpuSample.anyClockEventReasonWhileBusy(batch.gpus(),
                            throttling.criticalReasons(), throttling.busyRatio());
            if (batch.runSteps() != null) {
                for (RunSteps group : batch.runSteps()) {
                    urgent |= group != null && group.steps() != null && StepEvent.anyNonFiniteLoss(group.steps());
                }
            }
            for (RunState run : toJudge) {
                events.maybeEvaluate(run, now, urgent);
            }
            return result;
        });
    }

    /** A batch's {@code run_steps}, as {@link #ingestSteps}; a run without room loses its steps, not the batch. */
    private IngestResult applyBatchSteps(AgentBatch batch, Double requestSentAt, IngestResult result, double now,
                                         double wallOffset, Set<RunState> toJudge) {
        Double sentAt = requestSentAt != null ? requestSentAt : batch.sentAt();
        Map<String, List<StepEvent>> counted = new LinkedHashMap<>();
        String refused = null;
        for (RunSteps group : batch.runSteps()) {
            if (group == null || group.runId() == null || group.steps() == null || group.steps().isEmpty()) {
                continue;
            }
            try {
                List<StepEvent> runCounted = steps.apply(group.runId(), group.steps(), batch.agentId(), sentAt, false,
                        now, wallOffset);
                toJudge.add(registry.run(group.runId()));
                counted.computeIfAbsent(group.runId(), id -> new ArrayList<>()).addAll(runCounted);
            } catch (LimitReachedException e) {
                refused = e.getMessage();
            }
        }
        return new IngestResult(result.duplicate(), result.gpus(), counted, refused);
    }

    /**
     * Records step reports of a run, creating it when unknown. Reports without a positive, finite {@code time_s} or a
     * {@code step} are skipped; a missing or future {@code ts} becomes now. Only the lead rank's reports (and those
     * naming no rank) make the run's step series, and a step already counted from another source or rank is not
     * counted again (see {@link RankWindows}).
     *
     * @return the reports counted as the run's steps, in order
     */
    public List<StepEvent> ingestSteps(String runId, List<StepEvent> reports) {
        return ingestSteps(runId, reports, null, null);
    }

    /**
     * For reports an agent read from a log ({@code agentId}, or null): their times move by that agent's clock offset
     * (fed by the request's agent-clock send time, {@code Trainwatch-Sent-At}, or null), and a report at or below the
     * last applied from the same source and rank is dropped ({@link AppliedLedger}).
     */
    public List<StepEvent> ingestSteps(String runId, List<StepEvent> reports, String agentId, Double requestSentAt) {
        requireId(runId);
        Objects.requireNonNull(reports, "steps");
        return changing(() -> steps.apply(runId, reports, agentId, requestSentAt, true, now(),
                MonotonicClock.wallOffsetSeconds(clock)));
    }

    /**
     * Records why a run's processes failed ({@code trainwatch run} saw its command exit with an error): raises
     * {@code run_failed} at once, and stays when the run ends. An unknown run is created to hold it.
     */
    public RunView recordFailure(String runId, RunFailure failure, String host) {
        requireId(runId);
        Objects.requireNonNull(failure, "failure");
        return changing(() -> {
            double now = now();
            RunState run = registry.runOrCreate(runId, now);
            events.fail(run, failure, host, now);
            return observations.view(run, now);
        });
    }

    /** The run's own user is stopping it ({@code how}, e.g. {@code SIGINT}): its exit is then no failure. */
    public void stopping(String runId, String how) {
        requireId(runId);
        Objects.requireNonNull(how, "how");
        changing(() -> {
            registry.runOrCreate(runId, now()).stop(how);
        });
    }

    /** Marks a run ended (e.g. {@code trainwatch run} saw its command exit). Empty when the run is unknown. */
    public Optional<RunView> endRun(String runId) {
        return changing(() -> {
            RunState run = registry.run(runId);
            if (run == null) {
                return Optional.empty();
            }
            double now = now();
            events.end(run, now);
            return Optional.of(observations.view(run, now));
        });
    }

    /**
     * Forgets a run at once: its anomalies resolve and listeners hear it ended, then it leaves the fleet.
     *
     * @return whether the run was tracked
     */
    public boolean deleteRun(String runId) {
        return changing(() -> {
            RunState run = registry.run(runId);
            if (run == null) {
                return false;
            }
            events.end(run, now());
            registry.forget(run);
            registry.ledger.forgetRun(runId);
            return true;
        });
    }

    /** Labels a run as part of the bundled synthetic demo (shown as such on the page and in the API). */
    public void markSynthetic(String runId) {
        requireId(runId);
        synchronized (lock) {
            registry.runOrCreate(runId, now()).markSynthetic();
        }
    }

    /**
     * Puts back a run the history kept (after a restart); active anomalies come back active without listeners being
     * told again. Does nothing when the run is already tracked.
     */
    public void restoreRun(RunSummary summary) {
        Objects.requireNonNull(summary, "summary");
        requireId(summary.runId());
        synchronized (lock) {
            specs.restore(summary, now());
        }
    }

    /** Sends {@code onRunChanged} now for every running run whose summary changed (on an orderly shutdown). */
    public void publishChangedSummaries() {
        changing(() -> {
            double now = now();
            for (RunState run : registry.runs()) {
                if (!run.ended() && (run.dirty() || run.summaryDue())) {
                    events.notifyChanged(run, now);
                }
            }
        });
    }

    /** Re-evaluates what depends on time passing, forgets ended runs past retention; call it every second or so. */
    public void tick() {
        changing(() -> {
            double now = now();
            Set<String> newlyLost = updateAgentLiveness(now);
            List<RunState> expired = new ArrayList<>();
            double retention = settings.endedRunRetention().toMillis() / 1000.0;
            for (RunState run : registry.runs()) {
                if (!run.ended() && now - run.lastSeen() > retention) {
                    // Nothing heard for the retention time: the run is over even though no agent said so.
                    events.end(run, now);
                }
                if (run.ended()) {
                    if (now - run.endedAt() > retention) {
                        expired.add(run);
                    }
                    continue;
                }
                if (!newlyLost.isEmpty() && !Collections.disjoint(run.hosts().keySet(), newlyLost)) {
                    events.evaluate(run, now); // an agent of the run fell silent: agent_lost now, not later
                }
                events.onTick(run, now);
                if (run.registeredSpec() != null && !Slots.observed(run)
                        && now - run.firstSeen() >= RunObservations.UNMATCHED_AFTER_SECONDS
                        && run.firstUnmatchedLog()) {
                    LOG.log(System.Logger.Level.WARNING, "run {0}: {1}", run.runId(),
                            observations.unmatched(run, now).message());
                }
            }
            for (RunState run : expired) {
                registry.forget(run);
            }
        });
    }

    /** Marks agents lost or not; returns the hosts whose agent has just fallen silent. */
    private Set<String> updateAgentLiveness(double now) {
        DetectorSettings.AgentLost s = detectorSettings.agentLost();
        Set<String> newlyLost = new HashSet<>();
        for (AgentState a : registry.agents()) {
            double interval = a.intervalSeconds() != null ? a.intervalSeconds()
                    : s.defaultInterval().toMillis() / 1000.0;
            double limit = Math.max(s.minSilence().toMillis() / 1000.0, s.missedIntervals() * interval);
            boolean lost = now - a.lastSeen > limit;
            if (lost && !a.lost && a.host != null) {
                newlyLost.add(a.host);
            }
            a.lost = lost;
        }
        return newlyLost;
    }

    /** A change under the lock; listeners hear of it after the lock is released. */
    private <T> T changing(Supplier<T> change) {
        try {
            synchronized (lock) {
                return change.get();
            }
        } finally {
            outbox.drain();
        }
    }

    private void changing(Runnable change) {
        changing(() -> {
            change.run();
            return null;
        });
    }

    /** Every node's newest memory reading, by host. */
    public List<HostMemoryView> hostMemory() {
        synchronized (lock) {
            return registry.hostMemoryWindows().stream().filter(w -> w.size() > 0).map(RunObservations::hostMemory)
                    .toList();
        }
    }

    /** All tracked runs, newest first. */
    public List<RunView> runs() {
        synchronized (lock) {
            double now = now();
            return registry.runs().stream()
                    .sorted(Comparator.comparingDouble((RunState r) -> r.firstSeen()).reversed()
                            .thenComparing(r -> r.runId()))
                    .map(r -> observations.view(r, now)).toList();
        }
    }

    public Optional<RunView> run(String runId) {
        synchronized (lock) {
            RunState run = registry.run(runId);
            return run == null ? Optional.empty() : Optional.of(observations.view(run, now()));
        }
    }

    /** The entries of {@code w} from {@code readFromTs} through {@code untilTs} (infinite while the run runs). */
    static GpuWindow copyForSeries(GpuWindow w, double readFromTs, double untilTs) {
        int end = untilTs == Double.POSITIVE_INFINITY ? w.size() : w.firstIndexAtOrAfter(Math.nextUp(untilTs));
        return w.copy(Math.min(w.firstIndexAtOrAfter(readFromTs), end), end);
    }

    /**
     * A copy, taken under the lock, of what a series build of the run reads (each GPU's entries from
     * {@code readFrom.applyAsDouble(firstSeen)} on, the steps, the prediction); the build runs on it after the lock.
     */
    public Optional<SeriesSource> seriesSource(String runId, DoubleUnaryOperator readFrom) {
        Objects.requireNonNull(readFrom, "readFrom");
        synchronized (lock) {
            RunState run = registry.run(runId);
            if (run == null) {
                return Optional.empty();
            }
            double until = run.ended() && !Double.isNaN(run.endedAt()) ? run.endedAt() : Double.POSITIVE_INFINITY;
            double from = readFrom.applyAsDouble(run.firstSeen());
            List<GpuState> gs = registry.runGpus(run);
            List<GpuSeries> windows = new ArrayList<>(gs.size());
            double capacity = Double.NaN;
            for (GpuState g : gs) {
                windows.add(copyForSeries(g.window, from, until));
                capacity = GpuWindow.minNan(capacity, g.window.memoryTotalBytes());
            }
            Estimate e = run.estimate();
            if (Double.isNaN(capacity) && e != null && e.gpuMemoryBytes() > 0) {
                capacity = e.gpuMemoryBytes();
            }
            SeriesSource.Predicted predicted = e == null ? null
                    : new SeriesSource.Predicted(e.stepSeconds() > 0 ? e.stepSeconds() : null,
                            e.peakMemoryBytes() > 0 ? e.peakMemoryBytes() : null,
                            e.samplesPerSecond() > 0 ? e.samplesPerSecond() : null);
            return Optional.of(new SeriesSource(run.runId(), now(), registry.windowSeconds, run.firstSeen(), until,
                    run.steps().copy(), windows, predicted, RunObservations.toLong(capacity),
                    RunObservations.specSamplesPerStep(run)));
        }
    }

    /** Summary of one run, as the history keeps it. */
    public Optional<RunSummary> summary(String runId) {
        synchronized (lock) {
            RunState run = registry.run(runId);
            return run == null ? Optional.empty() : Optional.of(observations.summarize(run, now()));
        }
    }

    /** All tracked GPUs, by host then index. */
    public List<GpuView> gpus() {
        synchronized (lock) {
            List<GpuView> out = new ArrayList<>();
            for (GpuState g : registry.gpus()) {
                if (g.latest == null) {
                    continue;
                }
                Map<String, Long> xids = new LinkedHashMap<>();
                g.xidCounts.forEach((k, v) -> xids.put(Long.toString(k), v));
                out.add(new GpuView(g.window.uuid(), g.window.host(), g.runId, g.latest, xids, g.lastSeen,
                        WindowStats.idleSeconds(g.window, GpuWindow.IDLE_RATIO)));
            }
            out.sort(Comparator.comparing(GpuView::host).thenComparingInt(v -> v.latest().index())
                    .thenComparing(GpuView::uuid));
            return out;
        }
    }

    /** Each limit's use and what it refused and forgot. */
    public List<Slots.Usage> limits() {
        synchronized (lock) {
            return registry.limits();
        }
    }

    /** Keeps what is applied in {@code ledger} (across restarts with a data dir); call before any input arrives. */
    public void keepAppliedIn(AppliedLedger ledger) {
        Objects.requireNonNull(ledger, "ledger");
        synchronized (lock) {
            registry.ledger.close();
            registry.ledger = ledger;
        }
    }

    /** Closes the ledger of what was applied (at shutdown, after the last input). */
    public void closeLedger() {
        synchronized (lock) {
            registry.ledger.close();
        }
    }

    public List<AgentView> agents() {
        synchronized (lock) {
            return registry.agents().stream().map(a -> new AgentView(a.agentId, a.host, a.lastSeq, a.lastSeen, a.health,
                    a.gpuCount, a.batches, a.duplicates, a.lost, a.clock.known() ? a.clock.seconds() : null))
                    .sorted(Comparator.comparing(AgentView::host).thenComparing(AgentView::agentId)).toList();
        }
    }

    private double now() {
        return clock.millis() / 1000.0;
    }

    private static void requireId(String runId) {
        if (runId == null || runId.isBlank()) {
            throw new IllegalArgumentException("run id is required");
        }
    }
}
