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
import dev.trainwatch.collector.state.window.HostMemoryWindow;
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
 * The collector's in-memory picture of the fleet: GPUs (keyed by UUID), agents, runs, their rolling windows,
 * the comparison with the estimate and the anomalies. Plain Java; time comes from the injected {@link Clock}.
 *
 * <p>This class is the front: the lock and the public API. The parts behind it, each only called under the lock:
 * {@link Registry} (what is tracked, limits, eviction), {@link BatchIngest} and {@link StepIngest} (input),
 * {@link SpecBinding} (specs to runs), {@link RunEvents} with {@link EvaluationSchedule} (detectors and what
 * listeners hear), {@link RunObservations} (views and summaries), {@link Restore} (runs from history); the
 * {@link Outbox} delivers to listeners after the lock is released.
 *
 * <p>Threading: every public method is thread-safe. State changes happen under one internal lock (each call is
 * short: O(samples in the call), detectors run at most once per {@code evaluateEvery} per run on ingest).
 * Listeners are called after the lock is released, in order, never concurrently (see {@link FleetListener}):
 * on the caller's thread, or with {@link #deliverOnOwnThread()} on the outbox's thread, so that no caller
 * waits for a listener. Views returned are immutable snapshots. {@link #counts()} never waits for the lock.
 *
 * <p>Lifecycle: a run appears when an agent attributes GPUs to it, when steps are pushed for it, or when its spec
 * is registered, whichever comes first; the comparison starts once a spec is registered. It ends when every agent
 * that attributed it reports it ended, or on {@link #endRun}; ended runs stay visible for
 * {@code endedRunRetention}; a run nothing was heard of for that long is ended by {@link #tick}. The number of
 * runs, GPUs and agents is capped ({@link FleetSettings}).
 *
 * <p>Input: the HTTP edge validates requests and answers 4xx; the fleet is still defensive: it ignores
 * non-finite or negative readings (absent), step reports without a positive time, and entries without ids.
 */
public final class Fleet {

    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);
    /** Utilisation at or below this counts as idle (the agent's idle threshold, 5%). */
    static final double IDLE_RATIO = 0.05;

    private final Clock clock;
    private final FleetSettings settings;
    private final DetectorSettings detectorSettings;

    private final Object lock = new Object();
    private final Registry registry;
    private final RunObservations observations;
    private final Outbox outbox = new Outbox();
    private final RunEvents events;
    private final SpecBinding specs;
    private final BatchIngest batches;
    private final StepIngest steps;
    private final Restore restore;
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
        this.events = new RunEvents(registry, List.copyOf(detectors), predictor, observations, outbox);
        this.specs = new SpecBinding(registry, predictor, events);
        this.batches = new BatchIngest(registry, events, specs);
        this.steps = new StepIngest(registry, observations, events);
        this.restore = new Restore(registry, predictor);
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

    /**
     * The run on other hardware, re-priced from what it did ({@code GET /v1/runs/{id}/plans}): one plan per GPU id
     * (none: the run's own GPU), with the GPU count and per-GPU batch when given. The lock is held only to read the
     * run's view; the pricing runs after it.
     *
     * @throws RunPlans.Refused when the run has no spec or no observed step yet
     * @throws InvalidSpecException for an unknown GPU or an impossible target
     */
    public Optional<RunPlans.RunResult> plans(String runId, List<String> gpuIds, Integer gpus, Integer batch) {
        Optional<RunView> view = run(runId);
        return view.map(v -> RunRepricing.forRun(predictor, v, gpuIds, gpus, batch, prices));
    }

    public FleetSettings settings() {
        return settings;
    }

    public DetectorSettings detectorSettings() {
        return detectorSettings;
    }

    public void addListener(FleetListener listener) {
        outbox.addListener(listener);
    }

    public void removeListener(FleetListener listener) {
        outbox.removeListener(listener);
    }

    /**
     * From now on listeners are called on a thread of the fleet's own, so that no caller (an HTTP request, the
     * tick) waits for a listener that writes to disk or a network. The collector server does this; without it
     * listeners are called on the caller's thread before the call returns.
     */
    public void deliverOnOwnThread() {
        outbox.startOwnThread();
    }

    /**
     * Waits until listeners have been told everything that happened before this call, at most {@code timeout}.
     *
     * @return whether they were in time
     */
    public boolean awaitListeners(Duration timeout) {
        return outbox.awaitDelivered(timeout);
    }

    /** Delivers what listeners have not been told yet (at most {@code timeout}), then stops the outbox's thread. */
    public void stopDelivery(Duration timeout) {
        outbox.stop(timeout);
    }

    /** Notifications queued for listeners and not yet delivered, and listener calls that failed. */
    public record DeliveryCounts(long backlog, long failures) {
    }

    public DeliveryCounts delivery() {
        return new DeliveryCounts(outbox.backlog(), outbox.failures());
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

    /**
     * The limits ({@code gpus}, {@code agents}, {@code runs}, {@code specs}, by their metric label) that refused
     * something in the last {@link #REFUSING_SECONDS}: while any did, readings, agents, runs or specs are being
     * turned away (and retried by agents), which {@code /healthz} says. Read without the fleet's lock.
     */
    public List<String> refusing() {
        double now = now();
        List<String> kinds = new ArrayList<>();
        for (Slots.Kind kind : Slots.Kind.values()) {
            double last = registry.slots.lastRefused(kind);
            if (kind != Slots.Kind.RANKS && !Double.isNaN(last) && now - last < REFUSING_SECONDS) {
                kinds.add(kind.label());
            }
        }
        return kinds;
    }

    // ------------------------------------------------------------------ input

    /**
     * Registers (or replaces) a run's spec and prices it. When the spec names no GPU and the run's GPUs are
     * already known, the GPU is taken from their NVML name; when it names no data-parallel size, the number of
     * attributed GPUs is used.
     *
     * @return the run after registration, with its estimate
     * @throws InvalidSpecException when the estimator cannot price the spec (the run is left unchanged); the
     *                              HTTP edge answers 422 with its message
     */
    public RunView putSpec(String runId, RunSpec spec) {
        requireId(runId);
        Objects.requireNonNull(spec, "spec");
        return changing(() -> {
            double now = now();
            return observations.view(specs.put(runId, spec, now), now);
        });
    }

    /**
     * What a node that shares its agent id with other nodes (a cloned image) is told in its answers, one sentence;
     * empty when it shares none.
     */
    public Optional<String> agentIdClash(String agentId, String host) {
        synchronized (lock) {
            return batches.clones.clashOf(agentId, host);
        }
    }

    /**
     * Applies an agent batch: GPU samples, run attribution, events.
     *
     * @return whether the batch was a replay of an applied {@code seq} (then ignored), and how many GPUs it holds
     * @throws IllegalArgumentException when {@code agent_id} or {@code host} is missing
     */
    public IngestResult ingestBatch(AgentBatch batch) {
        return ingestBatch(batch, null);
    }

    /**
     * The same, with the time the request left the agent on the agent's clock ({@code Trainwatch-Sent-At}), which
     * the clock offset is estimated from instead of {@code sent_at}: a batch replayed from the agent's spool was made
     * long before it was sent, and after a collector restart the first batches of an agent with a deep spool are
     * all replays.
     *
     * @param requestSentAt seconds since the epoch on the agent's clock, or null when the request did not say
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
            // Once per run, on the readings and the steps together: a batch and its steps are one arrival. Urgent
            // (judged at once even for a run on several nodes): an event, a non-finite loss, a busy GPU slowed down
            // in hardware (the agent sends such polls at once; throttling's verdict would wait for the spacing).
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

    /**
     * The steps a batch carries ({@code run_steps}), applied as {@link #ingestSteps(String, List, String, Double)}
     * applies them from the same agent; the batch's send time already fed the agent's clock. A run that finds no
     * room loses its steps, not the batch's readings: the outcome says why.
     */
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
                counted.merge(group.runId(), runCounted, (a, b) -> {
                    List<StepEvent> both = new ArrayList<>(a);
                    both.addAll(b);
                    return both;
                });
            } catch (LimitReachedException e) {
                refused = e.getMessage();
            }
        }
        return new IngestResult(result.duplicate(), result.gpus(), counted, refused);
    }

    /**
     * Records step reports of a run. A run not seen before is created: a training script may push steps before
     * (or without) registering a spec. Reports without a positive, finite {@code time_s} or without {@code step}
     * are skipped; a report without {@code ts} is stamped now; a {@code ts} in the future is clamped to now.
     *
     * <p>Reports naming a {@code rank} are kept per rank (see {@link RankWindows}); only the lead rank's reports,
     * and reports naming no rank, make the run's step series, so a run whose every rank logs each step counts each
     * step once. A report for the step the series counted last, from another source (Open-Sora's progress bar
     * and rank 0's timer line for the same step), is the same step again and is not counted twice; nor is a report
     * from another rank older than the newest counted one (a node's agent replaying its spool while another node's
     * rank led).
     *
     * @return the reports counted as the run's steps (what feeds its step-time summary), in order
     */
    public List<StepEvent> ingestSteps(String runId, List<StepEvent> reports) {
        return ingestSteps(runId, reports, null);
    }

    /**
     * As {@link #ingestSteps(String, List)}, for reports an agent read from a log: their time stamps are moved by
     * that agent's clock offset (see {@link AgentView#clockOffsetSeconds()}). Reports with a {@code source} are
     * applied once: a report at or below the last step applied from the same source and rank is dropped, also
     * after a collector restart when the fleet keeps an {@link AppliedLedger} on disk.
     *
     * @param agentId the agent that sent them, or null
     */
    public List<StepEvent> ingestSteps(String runId, List<StepEvent> reports, String agentId) {
        return ingestSteps(runId, reports, agentId, null);
    }

    /**
     * The same, with the time the request left the agent on the agent's clock ({@code Trainwatch-Sent-At}): it
     * feeds the agent's clock offset like a batch's, and moves the reports' times when no batch of that agent has
     * come yet (a collector just restarted, whose first request from an agent with a skewed clock is a steps one).
     *
     * @param requestSentAt seconds since the epoch on the agent's clock, or null when the request did not say
     */
    public List<StepEvent> ingestSteps(String runId, List<StepEvent> reports, String agentId, Double requestSentAt) {
        requireId(runId);
        Objects.requireNonNull(reports, "steps");
        return changing(() -> {
            return steps.apply(runId, reports, agentId, requestSentAt, now(),
                    MonotonicClock.wallOffsetSeconds(clock));
        });
    }

    /**
     * Records why a run's processes failed ({@code trainwatch run} saw its command exit with an error and read the
     * tail of its output): raises {@code run_failed} at once, with the cause joined with what the collector saw
     * before. The anomaly stays when the run ends. A run not seen before (it failed before it reported anything) is
     * created to hold it.
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

    /**
     * Its own user is stopping the run ({@code trainwatch run} received {@code how}, e.g. {@code SIGINT}, and passed
     * it on): from now on its exit is no failure ({@code run_failed} is not raised for it), and it ends as stopped.
     * A run not seen yet is created to hold it.
     */
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
     * Forgets a run at once (a spec registered under the wrong id, a finished run): its active anomalies resolve and
     * listeners hear it ended, as for {@link #endRun}, then it leaves the fleet (its metric series go at the next
     * scrape; the history keeps what it wrote). A run that reports again later comes back as a new run.
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
     * Puts back a run the history kept (after a restart): spec, counters and anomalies. Active anomalies come
     * back active without listeners being told again; they resolve normally when their condition stays absent.
     * An invalid spec is kept without an estimate. Does nothing when the run is already tracked.
     */
    public void restoreRun(RunSummary summary) {
        Objects.requireNonNull(summary, "summary");
        requireId(summary.runId());
        synchronized (lock) {
            restore.restore(summary, now());
        }
    }

    /**
     * Sends {@code onRunChanged} now for every running run whose summary changed since it was last sent, whatever
     * the intervals: on an orderly shutdown, before the run history writes its last summaries.
     */
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

    /**
     * Re-evaluates what depends on time passing (stalled runs, lost agents), forgets ended runs past retention
     * and sends due {@code onRunChanged}. Call it every second or so.
     */
    public void tick() {
        changing(() -> {
            double now = now();
            Set<String> newlyLost = updateAgentLiveness(now);
            List<RunState> expired = new ArrayList<>();
            double retention = settings.endedRunRetention().toMillis() / 1000.0;
            for (RunState run : registry.runs()) {
                if (!run.ended() && now - run.lastSeen() > retention) {
                    // Nothing heard for the retention time (e.g. restored after a restart, then never seen
                    // again): the run is over even though no agent said so.
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
        Set<String> newlyLost = Set.of();
        for (AgentState a : registry.agents()) {
            double interval = a.intervalSeconds() != null ? a.intervalSeconds()
                    : s.defaultInterval().toMillis() / 1000.0;
            double limit = Math.max(s.minSilence().toMillis() / 1000.0, s.missedIntervals() * interval);
            boolean lost = now - a.lastSeen > limit;
            if (lost && !a.lost && a.host != null) {
                if (newlyLost.isEmpty()) {
                    newlyLost = new HashSet<>();
                }
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

    // ------------------------------------------------------------------ views

    /** Every node's newest memory reading, by host. */
    public List<HostMemoryView> hostMemory() {
        synchronized (lock) {
            List<HostMemoryView> out = new ArrayList<>();
            for (HostMemoryWindow w : registry.hostMemoryWindows()) {
                if (w.size() > 0) {
                    out.add(RunObservations.hostMemory(w));
                }
            }
            return out;
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

    /** Whether the calling thread holds the fleet's lock (for tests of what runs outside it). */
    boolean lockHeldByCurrentThread() {
        return Thread.holdsLock(lock);
    }

    /**
     * The entries of {@code w} a series build reads: from {@code readFromTs} through {@code untilTs} (the run's end,
     * infinite while it runs).
     */
    static GpuWindow copyForSeries(GpuWindow w, double readFromTs, double untilTs) {
        int end = untilTs == Double.POSITIVE_INFINITY ? w.size() : w.firstIndexAtOrAfter(Math.nextUp(untilTs));
        return w.copy(Math.min(w.firstIndexAtOrAfter(readFromTs), end), end);
    }

    /**
     * A copy of what a series build of the run reads ({@code GET /v1/runs/{id}/series}), taken under the lock: each
     * GPU's entries from {@code readFrom.applyAsDouble(firstSeen)} on (the build's carry-in before its range), the
     * step reports and the prediction. The build itself runs on the copy, after the lock is released, so ingest is
     * held up for the copy alone. Empty when the run is unknown.
     */
    public Optional<SeriesSource> seriesSource(String runId, DoubleUnaryOperator readFrom) {
        Objects.requireNonNull(readFrom, "readFrom");
        synchronized (lock) {
            RunState run = registry.run(runId);
            if (run == null) {
                return Optional.empty();
            }
            double until = run.ended() && !Double.isNaN(run.endedAt()) ? run.endedAt() : Double.POSITIVE_INFINITY;
            // Entries older than what the build reads (the carry-in before `since`) or after the run's end are
            // not copied: the build finds the same entries at shifted positions, so the answer is the same.
            double from = readFrom.applyAsDouble(run.firstSeen());
            List<GpuState> gs = observations.runGpus(run);
            List<GpuSeries> windows = new ArrayList<>(gs.size());
            double capacity = Double.NaN;
            for (GpuState g : gs) {
                windows.add(copyForSeries(g.window, from, until));
                double total = g.window.memoryTotalBytes();
                if (!Double.isNaN(total) && !(total >= capacity)) {
                    capacity = total;
                }
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
                        WindowStats.idleSeconds(g.window, IDLE_RATIO)));
            }
            out.sort(Comparator.comparing(GpuView::host).thenComparingInt(v -> v.latest().index())
                    .thenComparing(GpuView::uuid));
            return out;
        }
    }

    /**
     * Each limit's use and what it refused and forgot: runs, GPUs, agents and rank windows of the whole fleet (ranks
     * are also capped at {@code RankWindows.MAX_RANKS} per run).
     */
    public List<Slots.Usage> limits() {
        synchronized (lock) {
            return registry.limits();
        }
    }

    /**
     * Keeps what is applied in {@code ledger} (with a data directory: across restarts), instead of in memory
     * only. Call before any input arrives; the fleet closes the previous ledger.
     */
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
            List<AgentView> out = new ArrayList<>();
            for (AgentState a : registry.agents()) {
                out.add(new AgentView(a.agentId, a.host, a.lastSeq, a.lastSeen, a.health, a.gpuCount, a.batches,
                        a.duplicates, a.lost, a.clock.known() ? a.clock.seconds() : null));
            }
            out.sort(Comparator.comparing(AgentView::host).thenComparing(AgentView::agentId));
            return out;
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
