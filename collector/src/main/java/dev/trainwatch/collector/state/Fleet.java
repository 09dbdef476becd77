package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.AnomalyTracker;
import dev.trainwatch.collector.detect.AnomalyTracker.Transition;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Detectors;
import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.collector.series.RunSeries;
import dev.trainwatch.collector.series.SeriesBuilder;
import dev.trainwatch.collector.series.SeriesRequest;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The collector's in-memory picture of the fleet: GPUs (keyed by UUID), agents, runs, their rolling windows,
 * the comparison with the estimate and the anomalies. Plain Java; time comes from the injected {@link Clock}.
 *
 * <p>Threading: every public method is thread-safe. State changes happen under one internal lock (each call is
 * short: O(samples in the call), detectors run at most once per {@code evaluateEvery} per run on ingest).
 * Listeners are called after the lock is released, in order, never concurrently (see {@link FleetListener}).
 * Views returned are immutable snapshots.
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

    private static final System.Logger LOG = System.getLogger(Fleet.class.getName());
    /** Utilisation at or below this counts as idle (the agent's idle threshold, 5%). */
    static final double IDLE_RATIO = 0.05;
    /** Views report utilisation and clocks over this recent span. */
    static final double RECENT_SECONDS = 60;
    /** Attribution entries per host that are believed (a node has at most a few dozen GPUs). */
    private static final int MAX_GPUS_PER_HOST_PART = 64;
    /** A spec without any data this long gets an identity hint (view, page, log). */
    static final double UNMATCHED_AFTER_SECONDS = 60;

    private final Predictor predictor;
    private final Clock clock;
    private final FleetSettings settings;
    private final DetectorSettings detectorSettings;
    private final List<Detector> detectors;
    private final double windowSeconds;

    private final Object lock = new Object();
    private final Map<String, RunState> runs = new HashMap<>();
    private final Map<String, GpuState> gpus = new HashMap<>();
    private final Map<String, AgentState> agents = new HashMap<>();
    /** Each node's memory readings, by host (bounded by the agent limit). */
    private final Map<String, HostMemoryWindow> hostMemory = new HashMap<>();
    /** What the limits refused and forgot (see {@link Slots}: only entries that are not reporting are forgotten). */
    private final Slots slots = new Slots();
    /** Other names of reported runs (job ids, host:pid) → the run id the agent uses; bounded like the runs. */
    private final Map<String, String> aliases = new LinkedHashMap<>();
    /** Rank windows of all runs together (see {@link RankBudget}). */
    private final RankBudget rankBudget;
    /** The run views, observations and comparison (see {@link RunObservations}). */
    private final RunObservations observations;
    /** When detectors run per run (see {@link EvaluationSchedule}). */
    private final EvaluationSchedule schedule;

    private final List<FleetListener> listeners = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<Consumer<FleetListener>> outbox = new ConcurrentLinkedQueue<>();
    private final Object dispatchLock = new Object();

    public Fleet(Predictor predictor, Clock clock, FleetSettings settings, DetectorSettings detectorSettings) {
        this.predictor = Objects.requireNonNull(predictor, "predictor");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.detectorSettings = Objects.requireNonNull(detectorSettings, "detectorSettings");
        this.detectors = Detectors.all(detectorSettings);
        this.windowSeconds = settings.window().toMillis() / 1000.0;
        this.rankBudget = new RankBudget(settings.maxGpus());
        this.observations = new RunObservations(predictor, windowSeconds, runs, gpus);
        this.schedule = new EvaluationSchedule(settings, detectors, predictor, observations, agents,
                new EvaluationSchedule.Notifier() {
                    @Override
                    public void publish(String runId, Transition t) {
                        Fleet.this.publish(runId, t);
                    }

                    @Override
                    public void notifyChanged(RunState run, double now) {
                        Fleet.this.notifyChanged(run, now);
                    }
                });
        this.schedule.hostMemory(hostMemory);
        this.observations.hostMemory(hostMemory);
    }

    /** A fleet with default limits and thresholds over the real estimator. */
    public static Fleet create(Estimator estimator, Clock clock) {
        return new Fleet(Predictor.of(estimator), clock, FleetSettings.defaults(), DetectorSettings.defaults());
    }

    /** Sets what one GPU-hour costs ({@code --gpu-hour-price}): runs then show their cost so far and projected. */
    public void gpuHourPrices(GpuHourPrices prices) {
        synchronized (lock) {
            observations.prices(prices);
        }
    }

    public FleetSettings settings() {
        return settings;
    }

    public DetectorSettings detectorSettings() {
        return detectorSettings;
    }

    public void addListener(FleetListener listener) {
        listeners.add(Objects.requireNonNull(listener));
    }

    public void removeListener(FleetListener listener) {
        listeners.remove(listener);
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
        try {
            synchronized (lock) {
                double now = now();
                RunState existing = runs.get(runId);
                String target = aliases.get(runId);
                if (existing == null && target != null && runs.containsKey(target)) {
                    // The spec names the run by another of its names (its SLURM_JOB_ID, its TORCHELASTIC_RUN_ID,
                    // host:pid): it belongs to the run the agent reports.
                    runId = target;
                    existing = runs.get(target);
                }
                RunSpec filled = existing == null ? spec : fillFromObservation(existing, spec);
                Estimate estimate = predictor.estimate(filled); // may throw: nothing changed yet
                RunState run = runOrCreate(runId, now);
                run.registeredSpec = spec;
                run.estimate = estimate;
                run.gpuFilledFromObservation = spec.gpu() == null && filled.gpu() != null;
                run.lastSeen = now;
                notifyChanged(run, now);
                schedule.evaluate(run, now);
                return observations.view(run, now);
            }
        } finally {
            dispatch();
        }
    }

    /**
     * Applies an agent batch: GPU samples, run attribution, events.
     *
     * @return {@link IngestResult#DUPLICATE} when this agent's {@code seq} was already applied (a replay)
     * @throws IllegalArgumentException when {@code agent_id} or {@code host} is missing
     */
    public IngestResult ingestBatch(AgentBatch batch) {
        Objects.requireNonNull(batch, "batch");
        if (batch.agentId() == null || batch.agentId().isBlank() || batch.host() == null || batch.host().isBlank()) {
            throw new IllegalArgumentException("agent_id and host are required");
        }
        try {
            synchronized (lock) {
                return applyBatch(batch, now());
            }
        } finally {
            dispatch();
        }
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
    public List<StepEvent> ingestSteps(String runId, List<StepEvent> steps) {
        requireId(runId);
        Objects.requireNonNull(steps, "steps");
        List<StepEvent> counted = new ArrayList<>(steps.size());
        try {
            synchronized (lock) {
                double now = now();
                RunState run = runOrCreate(runId, now);
                for (StepEvent e : steps) {
                    if (e == null || e.step() == null || e.step() < 0 || e.timeS() == null
                            || !Double.isFinite(e.timeS()) || e.timeS() <= 0) {
                        continue;
                    }
                    double ts = stamp(e.ts(), now);
                    int rank = e.rank() != null && e.rank() >= 0 ? e.rank() : -1;
                    boolean counts = true;
                    if (rank >= 0) {
                        if (run.ranks == null) {
                            run.ranks = new RankWindows(windowSeconds, rankBudget);
                        }
                        long refusedBefore = run.ranks.refused;
                        counts = run.ranks.add(e, ts);
                        if (run.ranks.refused > refusedBefore) {
                            slots.refuse(Slots.Kind.RANKS, rankBudget.max, 0, now);
                        }
                    }
                    if (counts && rank != run.lastCountedRank
                            && (e.step() == run.lastCountedStep || ts < run.lastCountedTs)) {
                        // Another source's report of a step already counted: the same step again (bar and timer
                        // line), or an older report from a rank that took the lead back while replaying what its
                        // agent spooled (the ranks that led meanwhile counted those steps).
                        counts = false;
                    }
                    if (counts && run.failure != null && !run.ended && ts > run.failureTs) {
                        // Steps after the failure: the run goes on (an elastic restart, another node's ranks).
                        run.failure = null;
                    }
                    if (counts) {
                        run.accounting.step(e, ts, observations.encodingSecondsPerStep(run));
                        run.losses.add(e, ts);
                        run.steps.add(e, ts);
                        run.lastCountedStep = e.step();
                        run.lastCountedRank = rank;
                        run.lastCountedTs = ts;
                        counted.add(e);
                    }
                    if (e.step() >= run.lastStep) {
                        run.lastStep = e.step();
                        run.lastStepTs = ts;
                    }
                    if (e.bucketHeight() != null && e.bucketWidth() != null && e.bucketHeight() > 0
                            && e.bucketWidth() > 0) {
                        long cells = (long) e.bucketHeight() * e.bucketWidth();
                        if (cells > run.largestBucketCells) {
                            run.largestBucketCells = (int) Math.min(Integer.MAX_VALUE, cells);
                            run.largestBucketHeight = e.bucketHeight();
                            run.largestBucketWidth = e.bucketWidth();
                        }
                    }
                }
                run.lastSeen = now;
                run.dirty = true;
                run.summaryDue = true;
                schedule.maybeEvaluate(run, now);
            }
        } finally {
            dispatch();
        }
        return counted;
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
        try {
            synchronized (lock) {
                double now = now();
                RunState run = runOrCreate(runId, now);
                fail(run, failure, host, now);
                return observations.view(run, now);
            }
        } finally {
            dispatch();
        }
    }

    private void fail(RunState run, RunFailure failure, String host, double now) {
        run.failure = failure;
        run.failureHost = host;
        run.failureTs = now;
        run.dirty = true;
        run.summaryDue = true;
        schedule.evaluate(run, now);
    }

    /** Marks a run ended (e.g. {@code trainwatch run} saw its command exit). Empty when the run is unknown. */
    public Optional<RunView> endRun(String runId) {
        try {
            synchronized (lock) {
                RunState run = runs.get(runId);
                if (run == null) {
                    return Optional.empty();
                }
                double now = now();
                end(run, now);
                return Optional.of(observations.view(run, now));
            }
        } finally {
            dispatch();
        }
    }

    /**
     * Forgets a run at once (a spec registered under the wrong id, a finished run): its active anomalies resolve and
     * listeners hear it ended, as for {@link #endRun}, then it leaves the fleet (its metric series go at the next
     * scrape; the history keeps what it wrote). A run that reports again later comes back as a new run.
     *
     * @return whether the run was tracked
     */
    public boolean deleteRun(String runId) {
        try {
            synchronized (lock) {
                RunState run = runs.get(runId);
                if (run == null) {
                    return false;
                }
                end(run, now());
                forget(run);
                return true;
            }
        } finally {
            dispatch();
        }
    }

    /** Labels a run as part of the bundled synthetic demo (shown as such on the page and in the API). */
    public void markSynthetic(String runId) {
        requireId(runId);
        synchronized (lock) {
            runOrCreate(runId, now()).synthetic = true;
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
            if (runs.containsKey(summary.runId())) {
                return;
            }
            double now = now();
            RunState run;
            try {
                run = runOrCreate(summary.runId(), Math.min(now, summary.firstSeenTs()));
            } catch (LimitReachedException e) {
                LOG.log(System.Logger.Level.WARNING, "not restoring run {0}: {1}", summary.runId(), e.getMessage());
                return;
            }
            run.registeredSpec = summary.spec();
            if (summary.spec() != null) {
                try {
                    run.estimate = predictor.estimate(summary.spec());
                } catch (InvalidSpecException e) {
                    LOG.log(System.Logger.Level.WARNING, "restored run {0}: spec not priced: {1}",
                            summary.runId(), e.getMessage());
                }
            }
            run.lastSeen = summary.lastSeenTs() != null ? summary.lastSeenTs() : run.firstSeen;
            if (summary.lastStep() != null) {
                run.lastStep = summary.lastStep();
                run.lastStepTs = summary.lastStepTs() != null ? summary.lastStepTs() : Double.NaN;
            }
            if (summary.peakMemoryBytes() != null) {
                run.peakMemory = summary.peakMemoryBytes();
            }
            run.synthetic = Boolean.TRUE.equals(summary.synthetic());
            run.ended = summary.ended();
            run.endedAt = summary.endedAt() != null ? summary.endedAt() : Double.NaN;
            if (summary.anomalies() != null) {
                // An ended run's anomalies were resolved when it ended, except run_failed, which is why it ended.
                run.tracker.restore(summary.anomalies().stream()
                        .filter(a -> !summary.ended() || !a.active() || a.kind() == AnomalyKind.RUN_FAILED).toList(),
                        now);
                if (!summary.ended()) {
                    summary.anomalies().stream()
                            .filter(a -> a.active() && a.kind() == AnomalyKind.XID_ERROR)
                            .forEach(a -> run.restoredXids.addAll(xidsOf(a)));
                }
            }
            run.lastChangeNotified = now;
            // The time before the restart is unknown here: account from now.
            run.accounting = new RunAccounting(now);
        }
    }

    /** The XIDs an {@code xid_error} anomaly's evidence names, stamped with its newest XID's time. */
    private static List<RunContext.XidRecord> xidsOf(Anomaly anomaly) {
        Map<String, Object> evidence = anomaly.evidence();
        double ts = evidence.get("newest_ts") instanceof Number n ? n.doubleValue() : anomaly.since();
        List<String> uuids = new ArrayList<>();
        if (evidence.get("gpu_uuids") instanceof List<?> list) {
            list.forEach(u -> uuids.add(String.valueOf(u)));
        }
        String uuid = uuids.isEmpty() ? null : uuids.get(0);
        List<RunContext.XidRecord> out = new ArrayList<>();
        if (evidence.get("xids") instanceof List<?> xids) {
            for (Object xid : xids) {
                if (xid instanceof Number n) {
                    out.add(new RunContext.XidRecord(ts, null, uuid, n.longValue()));
                }
            }
        }
        return out;
    }

    /**
     * Sends {@code onRunChanged} now for every running run whose summary changed since it was last sent, whatever
     * the intervals: on an orderly shutdown, before the run history writes its last summaries.
     */
    public void publishChangedSummaries() {
        try {
            synchronized (lock) {
                double now = now();
                for (RunState run : runs.values()) {
                    if (!run.ended && (run.dirty || run.summaryDue)) {
                        notifyChanged(run, now);
                    }
                }
            }
        } finally {
            dispatch();
        }
    }

    /**
     * Re-evaluates what depends on time passing (stalled runs, lost agents), forgets ended runs past retention
     * and sends due {@code onRunChanged}. Call it every second or so.
     */
    public void tick() {
        try {
            synchronized (lock) {
                double now = now();
                updateAgentLiveness(now);
                List<RunState> expired = new ArrayList<>();
                double retention = settings.endedRunRetention().toMillis() / 1000.0;
                for (RunState run : runs.values()) {
                    if (!run.ended && now - run.lastSeen > retention) {
                        // Nothing heard for the retention time (e.g. restored after a restart, then never seen
                        // again): the run is over even though no agent said so.
                        end(run, now);
                    }
                    if (run.ended) {
                        if (now - run.endedAt > retention) {
                            expired.add(run);
                        }
                        continue;
                    }
                    schedule.maybeEvaluate(run, now);
                    if (!run.unmatchedLogged && run.registeredSpec != null && !Slots.observed(run)
                            && now - run.firstSeen >= UNMATCHED_AFTER_SECONDS) {
                        run.unmatchedLogged = true;
                        LOG.log(System.Logger.Level.WARNING, "run {0}: {1}", run.runId, observations.unmatched(run, now).message());
                    }
                }
                for (RunState run : expired) {
                    forget(run);
                }
            }
        } finally {
            dispatch();
        }
    }

    // ------------------------------------------------------------------ views

    /** All tracked runs, newest first. */
    /** Every node's newest memory reading, by host. */
    public List<HostMemoryView> hostMemory() {
        synchronized (lock) {
            List<HostMemoryView> out = new ArrayList<>(hostMemory.size());
            for (HostMemoryWindow w : hostMemory.values()) {
                if (w.size() > 0) {
                    out.add(HostMemoryView.of(w));
                }
            }
            return out;
        }
    }

    public List<RunView> runs() {
        synchronized (lock) {
            double now = now();
            return runs.values().stream()
                    .sorted(Comparator.comparingDouble((RunState r) -> r.firstSeen).reversed()
                            .thenComparing(r -> r.runId))
                    .map(r -> observations.view(r, now)).toList();
        }
    }

    public Optional<RunView> run(String runId) {
        synchronized (lock) {
            RunState run = runId == null ? null : runs.get(runId);
            return run == null ? Optional.empty() : Optional.of(observations.view(run, now()));
        }
    }

    /**
     * A run's recent history from the in-memory windows ({@code GET /v1/runs/{id}/series}). Only a copy of what the
     * request reads (each GPU's entries from shortly before {@code since}, the step reports, the prediction) is
     * taken under the lock; the build, linear in the entries copied, runs after the lock is released, so ingest is
     * held up for the copy alone whatever {@code max_points} or the answer's size. Empty when the run is unknown.
     */
    public Optional<RunSeries> series(String runId, SeriesRequest request) {
        Optional<SeriesBuilder.Source> source = seriesSource(runId, request);
        if (source.isEmpty()) {
            return Optional.empty();
        }
        afterSeriesCopy.run();
        return Optional.of(SeriesBuilder.build(source.get(), request));
    }

    /**
     * Runs between the copy of a series' windows and the build, on the caller's thread with the lock released; a
     * test sets it to hold a build in progress while it ingests. Does nothing otherwise.
     */
    volatile Runnable afterSeriesCopy = () -> {
    };

    /** Whether the calling thread holds the fleet's lock (for tests of what runs outside it). */
    boolean lockHeldByCurrentThread() {
        return Thread.holdsLock(lock);
    }

    /**
     * The entries of {@code w} a series build reads: from {@code readFromTs} ({@link SeriesBuilder#gpuReadFromTs})
     * through {@code untilTs} (the run's end, infinite while it runs), as {@link SeriesBuilder#build} bounds them.
     */
    static GpuWindow copyForSeries(GpuWindow w, double readFromTs, double untilTs) {
        int end = untilTs == Double.POSITIVE_INFINITY ? w.size() : w.firstIndexAtOrAfter(Math.nextUp(untilTs));
        return w.copy(Math.min(w.firstIndexAtOrAfter(readFromTs), end), end);
    }

    /** The series build's input, copied under the lock: the only part of a series request that holds it. */
    Optional<SeriesBuilder.Source> seriesSource(String runId, SeriesRequest request) {
        Objects.requireNonNull(request, "request");
        synchronized (lock) {
            RunState run = runId == null ? null : runs.get(runId);
            if (run == null) {
                return Optional.empty();
            }
            double until = run.ended && !Double.isNaN(run.endedAt) ? run.endedAt : Double.POSITIVE_INFINITY;
            // Entries older than what the build reads (the carry-in before `since`) or after the run's end are
            // not copied: the build finds the same entries at shifted positions, so the answer is the same.
            double readFrom = SeriesBuilder.gpuReadFromTs(request, run.firstSeen);
            List<GpuState> gs = observations.runGpus(run);
            List<GpuSeries> windows = new ArrayList<>(gs.size());
            double capacity = Double.NaN;
            for (GpuState g : gs) {
                windows.add(copyForSeries(g.window, readFrom, until));
                double total = g.window.memoryTotalBytes();
                if (!Double.isNaN(total) && !(total >= capacity)) {
                    capacity = total;
                }
            }
            Estimate e = run.estimate;
            if (Double.isNaN(capacity) && e != null && e.gpuMemoryBytes() > 0) {
                capacity = e.gpuMemoryBytes();
            }
            RunSeries.Predicted predicted = e == null ? null
                    : new RunSeries.Predicted(e.stepSeconds() > 0 ? e.stepSeconds() : null,
                            e.peakMemoryBytes() > 0 ? e.peakMemoryBytes() : null,
                            e.samplesPerSecond() > 0 ? e.samplesPerSecond() : null);
            return Optional.of(new SeriesBuilder.Source(run.runId, now(), windowSeconds, run.firstSeen, until,
                    run.steps.copy(), windows, predicted, RunObservations.toLong(capacity), RunObservations.specSamplesPerStep(run)));
        }
    }

    /** Summary of one run, as the history keeps it. */
    public Optional<RunSummary> summary(String runId) {
        synchronized (lock) {
            RunState run = runId == null ? null : runs.get(runId);
            return run == null ? Optional.empty() : Optional.of(observations.summarize(run, now()));
        }
    }

    /** All tracked GPUs, by host then index. */
    public List<GpuView> gpus() {
        synchronized (lock) {
            List<GpuView> out = new ArrayList<>(gpus.size());
            for (GpuState g : gpus.values()) {
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
            return List.of(slots.usage(Slots.Kind.RUNS, runs.size(), settings.maxRuns()),
                    slots.usage(Slots.Kind.GPUS, gpus.size(), settings.maxGpus()),
                    slots.usage(Slots.Kind.AGENTS, agents.size(), settings.maxAgents()),
                    slots.usage(Slots.Kind.RANKS, rankBudget.used, rankBudget.max));
        }
    }

    public List<AgentView> agents() {
        synchronized (lock) {
            List<AgentView> out = new ArrayList<>(agents.size());
            for (AgentState a : agents.values()) {
                out.add(new AgentView(a.agentId, a.host, a.lastSeq, a.lastSeen, a.health, a.gpuCount, a.batches,
                        a.duplicates, a.lost));
            }
            out.sort(Comparator.comparing(AgentView::host).thenComparing(AgentView::agentId));
            return out;
        }
    }

    // ------------------------------------------------------------------ internals

    private IngestResult applyBatch(AgentBatch batch, double now) {
        AgentState agent = agents.get(batch.agentId());
        if (agent != null && batch.seq() <= agent.lastSeq) {
            agent.duplicates++;
            return IngestResult.DUPLICATE;
        }
        if (agent == null) {
            if (agents.size() >= settings.maxAgents()) {
                String silent = Slots.silentToForget(agents, a -> a.lastSeen, now);
                if (silent == null) {
                    LOG.log(System.Logger.Level.WARNING, "agent limit {0} reached and every agent is live: refusing"
                            + " a new agent", settings.maxAgents());
                    throw slots.refuse(Slots.Kind.AGENTS, settings.maxAgents(),
                            Slots.retryAfterSeconds(agents.values(), a -> a.lastSeen, now), now);
                }
                agents.remove(silent);
                slots.forgot(Slots.Kind.AGENTS);
            }
            agent = new AgentState(batch.agentId());
            agents.put(batch.agentId(), agent);
        }
        agent.host = batch.host();
        agent.lastSeq = batch.seq();
        agent.lastSeen = now;
        agent.lost = false;
        agent.batches++;
        if (batch.health() != null) {
            agent.health = batch.health();
        }
        Set<RunState> touched = new java.util.LinkedHashSet<>();
        int gpuCount = 0;
        if (batch.gpus() != null) {
            for (GpuSample s : batch.gpus()) {
                if (s == null || s.uuid() == null || s.uuid().isBlank()) {
                    continue;
                }
                gpuCount++;
                GpuState g = gpuOrCreate(s.uuid(), now);
                if (g == null) {
                    continue; // the GPU limit is full of live GPUs
                }
                g.window.host = batch.host();
                g.window.add(s, stamp(s.ts(), now));
                g.window.trim(now);
                g.latest = s;
                g.lastSeen = now;
                if (g.runId != null) {
                    RunState run = runs.get(g.runId);
                    if (run != null) {
                        if (!run.ended) {
                            run.accounting.gpuSample(s.uuid(), s, stamp(s.ts(), now));
                        }
                        double used = s.memoryUsedBytes() != null && s.memoryUsedBytes() >= 0
                                ? s.memoryUsedBytes() : Double.NaN;
                        if (!Double.isNaN(used) && !(used <= run.peakMemory)) {
                            run.peakMemory = used;
                            run.summaryDue = true;
                        }
                        touched.add(run);
                    }
                }
            }
        }
        agent.gpuCount = gpuCount;
        if (batch.hostMemory() != null) {
            HostMemoryWindow w = hostMemory.get(batch.host());
            if (w == null) {
                if (hostMemory.size() >= settings.maxAgents()) {
                    hostMemory.values().stream().min(java.util.Comparator.comparingDouble(h -> h.lastSeen))
                            .ifPresent(oldest -> hostMemory.remove(oldest.host()));
                }
                w = new HostMemoryWindow(batch.host());
                hostMemory.put(batch.host(), w);
            }
            if (w != null) {
                w.add(batch.hostMemory(), stamp(batch.hostMemory().ts(), now));
            }
        }
        if (batch.runs() != null) {
            for (RunAttribution a : batch.runs()) {
                if (a == null || a.runId() == null || a.runId().isBlank()) {
                    continue;
                }
                RunState run;
                try {
                    run = attribute(a, batch.host(), now);
                } catch (LimitReachedException refused) {
                    continue; // a new run while every run slot is live: the batch's GPU readings still count
                }
                if (run != null) {
                    touched.add(run);
                }
            }
        }
        if (batch.events() != null) {
            for (AgentEvent e : batch.events()) {
                applyEvent(e, batch.host(), now, touched);
            }
        }
        for (RunState run : touched) {
            run.dirty = true;
            if (!run.ended) {
                schedule.maybeEvaluate(run, now);
            }
        }
        return IngestResult.ACCEPTED;
    }

    private RunState attribute(RunAttribution a, String host, double now) {
        RunState run = runOrCreate(a.runId(), now);
        if (a.aliases() != null) {
            for (String alias : a.aliases()) {
                if (alias == null || alias.isBlank() || alias.equals(a.runId())) {
                    continue;
                }
                aliases.remove(alias);
                aliases.put(alias, a.runId());
                adoptSpecOf(alias, run, now);
            }
            while (aliases.size() > settings.maxRuns() * 4) {
                aliases.remove(aliases.keySet().iterator().next());
            }
        }
        RunState.HostPart part = run.hosts.computeIfAbsent(host, h -> new RunState.HostPart());
        Set<String> previous = Set.copyOf(part.gpuUuids);
        part.gpuUuids.clear();
        part.ranksByGpu.clear();
        if (a.gpuUuids() != null) {
            for (String uuid : a.gpuUuids()) {
                if (uuid != null && !uuid.isBlank() && part.gpuUuids.size() < MAX_GPUS_PER_HOST_PART) {
                    part.gpuUuids.add(uuid);
                }
            }
        }
        if (a.ranks() != null) {
            Set<Integer> seen = new java.util.HashSet<>();
            for (RankInfo r : a.ranks()) {
                if (r == null || r.rank() == null) {
                    continue;
                }
                if (part.procs.size() < MAX_GPUS_PER_HOST_PART || part.procs.containsKey(r.rank())) {
                    RunState.RankProc p = part.procs.computeIfAbsent(r.rank(), k -> new RunState.RankProc());
                    if (p.pid != r.pid()) {
                        p.size = 0; // another process now holds the rank (a restart): its CPU time starts again
                    }
                    p.pid = r.pid();
                    p.gpuUuid = r.gpuUuids() != null && !r.gpuUuids().isEmpty() ? r.gpuUuids().get(0) : null;
                    p.state = r.state();
                    p.rss = r.rssBytes() != null ? r.rssBytes() : Double.NaN;
                    p.workers = r.workers() != null ? r.workers() : -1;
                    p.workersRss = r.workersRssBytes() != null ? r.workersRssBytes() : Double.NaN;
                    p.ts = now;
                    if (r.cpuSeconds() != null && Double.isFinite(r.cpuSeconds())) {
                        p.cpu(now, r.cpuSeconds());
                    }
                    seen.add(r.rank());
                }
                if (r.gpuUuids() == null) {
                    continue;
                }
                for (String uuid : r.gpuUuids()) {
                    if (part.gpuUuids.contains(uuid)) {
                        part.ranksByGpu.computeIfAbsent(uuid, u -> new ArrayList<>()).add(r.rank());
                    }
                }
            }
        }
        if (a.ranks() != null) {
            Set<Integer> reported = new java.util.HashSet<>();
            a.ranks().forEach(r -> {
                if (r != null && r.rank() != null) {
                    reported.add(r.rank());
                }
            });
            part.procs.keySet().retainAll(reported);
        }
        for (String uuid : previous) {
            GpuState g = gpus.get(uuid);
            if (g != null && a.runId().equals(g.runId) && !part.gpuUuids.contains(uuid)) {
                g.runId = null;
                run.accounting.gpuLeft(uuid);
            }
        }
        for (String uuid : part.gpuUuids) {
            GpuState g = gpus.get(uuid);
            if (g != null) {
                if (!a.runId().equals(g.runId)) {
                    // A GPU newly given to this run: what an earlier run peaked at is not this run's peak.
                    g.window.peakMemory = WindowStats.latestMemory(g.window);
                }
                g.runId = a.runId();
                double peak = g.window.peakMemory;
                if (!Double.isNaN(peak) && !(peak <= run.peakMemory)) {
                    run.peakMemory = peak;
                    run.summaryDue = true;
                }
            }
        }
        run.lastSeen = now;
        maybeFillGpu(run);
        if (Boolean.TRUE.equals(a.ended())) {
            part.ended = true;
            if (!run.ended && run.hosts.values().stream().allMatch(p -> p.ended)) {
                end(run, now);
            }
            return null;
        }
        part.ended = false;
        if (run.ended) {
            // The same run id is running again (e.g. a requeued Slurm job): reopen it.
            run.ended = false;
            run.endedAt = Double.NaN;
            run.failure = null;
            notifyChanged(run, now);
        }
        return run;
    }

    private void applyEvent(AgentEvent e, String host, double now, Set<RunState> touched) {
        if (e == null || e.kind() == null) {
            return;
        }
        switch (e.kind()) {
            case "xid" -> {
                if (e.xid() == null || e.gpuUuid() == null) {
                    return;
                }
                GpuState g = gpus.get(e.gpuUuid());
                if (g == null) {
                    g = gpuOrCreate(e.gpuUuid(), now);
                    if (g == null) {
                        return;
                    }
                    g.window.host = host;
                }
                g.addXid(new RunContext.XidRecord(stamp(e.ts(), now), host, e.gpuUuid(), e.xid()));
                if (g.runId != null && runs.containsKey(g.runId)) {
                    touched.add(runs.get(g.runId));
                }
            }
            case "gpu_lost" -> {
                GpuState g = e.gpuUuid() == null ? null : gpus.get(e.gpuUuid());
                if (g != null) {
                    g.window.lost = true;
                    if (g.runId != null && runs.containsKey(g.runId)) {
                        touched.add(runs.get(g.runId));
                    }
                }
            }
            case "run_ended" -> {
                RunState run = e.runId() == null ? null : runs.get(e.runId());
                if (run != null) {
                    RunState.HostPart part = run.hosts.computeIfAbsent(host, h -> new RunState.HostPart());
                    part.ended = true;
                    if (!run.ended && run.hosts.values().stream().allMatch(p -> p.ended)) {
                        end(run, now);
                    }
                }
            }
            case "run_failed" -> {
                RunState run = e.runId() == null ? null : runs.get(e.runId());
                if (run != null && e.failure() != null) {
                    fail(run, e.failure(), host, now);
                }
            }
            case "phase" -> {
                // A checkpoint, evaluation or sampling phase the run's log announced: its time is not a stall.
                RunState run = e.runId() == null ? null : runs.get(e.runId());
                if (run != null && !run.ended) {
                    run.accounting.phase(e.message(), stamp(e.ts(), now));
                    run.phaseKind = e.message();
                    run.phaseTs = stamp(e.ts(), now);
                    touched.add(run);
                }
            }
            default -> {
                // read_error and kinds of newer agents: counted by the agent's own health, nothing to track here
            }
        }
    }

    private void end(RunState run, double now) {
        if (run.ended) {
            return;
        }
        run.ended = true;
        run.endedAt = now;
        for (Transition t : run.tracker.resolveAllExcept(now, AnomalyKind.RUN_FAILED)) {
            publish(run.runId, t);
        }
        RunSummary summary = observations.summarize(run, now);
        outbox.add(l -> l.onRunEnded(summary));
    }

    private void forget(RunState run) {
        runs.remove(run.runId);
        if (run.ranks != null) {
            rankBudget.release(run.ranks.count());
        }
        for (String uuid : run.gpuUuids()) {
            GpuState g = gpus.get(uuid);
            if (g != null && run.runId.equals(g.runId)) {
                g.runId = null;
            }
        }
    }

    private void updateAgentLiveness(double now) {
        DetectorSettings.AgentLost s = detectorSettings.agentLost();
        for (AgentState a : agents.values()) {
            double interval = a.intervalSeconds() != null ? a.intervalSeconds()
                    : s.defaultInterval().toMillis() / 1000.0;
            double limit = Math.max(s.minSilence().toMillis() / 1000.0, s.missedIntervals() * interval);
            a.lost = now - a.lastSeen > limit;
        }
    }


    private void publish(String runId, Transition t) {
        Anomaly a = t.anomaly();
        if (t.raised()) {
            outbox.add(l -> l.onAnomalyRaised(runId, a));
        } else {
            outbox.add(l -> l.onAnomalyResolved(runId, a));
        }
    }

    private void notifyChanged(RunState run, double now) {
        run.lastChangeNotified = now;
        run.dirty = false;
        run.summaryDue = false;
        RunSummary summary = observations.summarize(run, now);
        outbox.add(l -> l.onRunChanged(summary));
    }

    /** Delivers queued notifications outside the state lock, in order, one thread at a time. */
    private void dispatch() {
        if (outbox.isEmpty()) {
            return;
        }
        synchronized (dispatchLock) {
            Consumer<FleetListener> call;
            while ((call = outbox.poll()) != null) {
                for (FleetListener l : listeners) {
                    try {
                        call.accept(l);
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.ERROR, "fleet listener failed", e);
                    }
                }
            }
        }
    }

    private RunState runOrCreate(String runId, double now) {
        RunState run = runs.get(runId);
        if (run != null) {
            return run;
        }
        if (runs.size() >= settings.maxRuns()) {
            makeRoomForRun();
        }
        run = new RunState(runId, now, new StepWindow(windowSeconds, settings.stepWindowEntries()),
                new AnomalyTracker(detectorSettings, settings.anomalyHistory()));
        runs.put(runId, run);
        run.dirty = true;
        return run;
    }

    /**
     * A spec registered under another name of this run (its job id, host:pid) before the agent reported it: the
     * spec moves to the run the agent reports, and the spec-only run goes (nothing was observed under it).
     */
    private void adoptSpecOf(String alias, RunState run, double now) {
        RunState specOnly = runs.get(alias);
        if (specOnly == null || specOnly == run || specOnly.registeredSpec == null || Slots.observed(specOnly)) {
            return;
        }
        if (run.registeredSpec == null) {
            RunSpec filled = fillFromObservation(run, specOnly.registeredSpec);
            try {
                run.estimate = predictor.estimate(filled);
                run.registeredSpec = specOnly.registeredSpec;
                run.gpuFilledFromObservation = specOnly.registeredSpec.gpu() == null && filled.gpu() != null;
            } catch (InvalidSpecException e) {
                LOG.log(System.Logger.Level.WARNING, "run {0}: the spec registered as {1} is not priced: {2}",
                        run.runId, alias, e.getMessage());
                return;
            }
            notifyChanged(run, now);
        }
        LOG.log(System.Logger.Level.INFO, "run {0} is also known as {1}: the spec registered under {1} now applies to it",
                run.runId, alias);
        forget(specOnly);
    }

    /**
     * Forgets an ended, silent or spec-only run to make room for a new one; when every run is live, refuses.
     *
     * @throws LimitReachedException when no run may be forgotten (nothing changed)
     */
    private void makeRoomForRun() {
        double now = now();
        RunState victim = Slots.runToForget(runs.values(), now);
        if (victim == null) {
            LOG.log(System.Logger.Level.WARNING, "run limit {0} reached and every run is live: refusing a new run",
                    settings.maxRuns());
            throw slots.refuse(Slots.Kind.RUNS, settings.maxRuns(),
                    Slots.retryAfterSeconds(runs.values(), r -> r.lastSeen, now), now);
        }
        LOG.log(System.Logger.Level.WARNING, "run limit {0} reached: forgetting {1} run {2}", settings.maxRuns(),
                victim.ended ? "ended" : now - victim.lastSeen >= Slots.SILENT_SECONDS ? "silent" : "spec-only",
                victim.runId);
        forget(victim);
        slots.forgot(Slots.Kind.RUNS);
    }

    /**
     * The GPU's state, created if new. When the GPU limit is full, a GPU silent for {@link Slots#SILENT_SECONDS}
     * gives its slot; when none has, the new GPU is refused: null, counted, and its readings ignored.
     */
    private GpuState gpuOrCreate(String uuid, double now) {
        GpuState g = gpus.get(uuid);
        if (g == null) {
            if (gpus.size() >= settings.maxGpus()) {
                String silent = Slots.silentToForget(gpus, x -> x.lastSeen, now);
                if (silent == null) {
                    slots.refuse(Slots.Kind.GPUS, settings.maxGpus(), 0, now);
                    LOG.log(System.Logger.Level.WARNING, "GPU limit {0} reached and every GPU is live: ignoring new"
                            + " GPUs", settings.maxGpus());
                    return null;
                }
                gpus.remove(silent);
                slots.forgot(Slots.Kind.GPUS);
            }
            g = new GpuState(new GpuWindow(uuid, windowSeconds, settings.gpuWindowEntries()));
            g.lastSeen = now;
            gpus.put(uuid, g);
        }
        return g;
    }

    /** Fills the spec's GPU from the NVML name of the run's GPUs, and its size from their count. */
    private RunSpec fillFromObservation(RunState run, RunSpec spec) {
        RunSpec filled = spec;
        int attributed = run.gpuUuids().size();
        if (spec.gpus() == null && attributed > 0) {
            filled = filled.overriddenBy(new RunSpec(null, null, attributed, null, null, null, null, null, null,
                    null, null, null, null, null, null, null, null));
        }
        // A family name ("a100") that the catalog finds ambiguous is settled by what NVML says the run's GPUs are
        // ("NVIDIA A100-SXM4-80GB" -> a100-80gb): their memory decides, never a silent pick.
        String family = spec.gpu() != null && predictor.resolveGpuId(spec.gpu()).isEmpty()
                ? spec.gpu().strip().toLowerCase(java.util.Locale.ROOT) + "-" : null;
        if (spec.gpu() == null || family != null) {
            for (String uuid : run.gpuUuids()) {
                GpuState g = gpus.get(uuid);
                if (g != null && g.window.name() != null) {
                    Optional<String> id = predictor.resolveGpuId(g.window.name());
                    if (id.isPresent() && (family == null || id.get().startsWith(family))) {
                        filled = filled.overriddenBy(withGpu(id.get()));
                        break;
                    }
                }
            }
        }
        return filled;
    }

    /** A spec registered before the run's GPUs were known gets its GPU once they are. */
    private void maybeFillGpu(RunState run) {
        if (run.registeredSpec == null || run.registeredSpec.gpu() != null || run.gpuFilledFromObservation) {
            return;
        }
        RunSpec filled = fillFromObservation(run, run.registeredSpec);
        if (filled.gpu() == null) {
            return;
        }
        try {
            run.estimate = predictor.estimate(filled);
            run.gpuFilledFromObservation = true;
        } catch (InvalidSpecException e) {
            run.gpuFilledFromObservation = true; // do not retry on every batch
            LOG.log(System.Logger.Level.WARNING, "run {0}: spec with observed GPU {1} not priced: {2}",
                    run.runId, filled.gpu(), e.getMessage());
        }
    }

    private static RunSpec withGpu(String gpu) {
        RunSpec e = RunSpec.empty();
        return new RunSpec(e.model(), gpu, e.gpus(), e.batch(), e.resolution(), e.height(), e.width(), e.frames(),
                e.precision(), e.optimizer(), e.gradCheckpointing(), e.ema(), e.features(), e.zero(),
                e.attention(), e.gradAccumulation(), e.totalSteps());
    }

    private double now() {
        return clock.millis() / 1000.0;
    }

    /** A client timestamp, clamped to now (a skewed agent clock must not put samples in the future). */
    private static double stamp(Double ts, double now) {
        return ts == null || !Double.isFinite(ts) || ts <= 0 || ts > now ? now : ts;
    }

    private static double stamp(double ts, double now) {
        return !Double.isFinite(ts) || ts <= 0 || ts > now ? now : ts;
    }

    private static void requireId(String runId) {
        if (runId == null || runId.isBlank()) {
            throw new IllegalArgumentException("run id is required");
        }
    }

}
