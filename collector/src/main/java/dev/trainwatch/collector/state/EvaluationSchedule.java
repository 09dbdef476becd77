package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.AnomalyTracker.Transition;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.HostMemorySeries;
import dev.trainwatch.collector.detect.LossHealth;
import dev.trainwatch.collector.detect.RankProcess;
import dev.trainwatch.collector.detect.RankSeries;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * When a run's detectors run and what its listeners hear of its life: each run is evaluated at most every
 * {@link FleetSettings#evaluateEvery()} and its summary published at most every summary interval (or after a
 * transition); changes are applied to the run and queued in the {@link Outbox}. Holds the {@link RunContext} the
 * detectors see. Only called under the {@link Fleet}'s lock.
 */
final class EvaluationSchedule {
    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);
    /** onRunChanged at most this often per run while data flows. */
    static final double CHANGE_NOTIFY_SECONDS = 60;

    private final FleetSettings settings;
    private final double summaryIntervalSeconds;
    private final List<Detector> detectors;
    private final Predictor predictor;
    private final RunObservations observations;
    private final Registry registry;
    private final Outbox outbox;
    /** Failures per detector since start (read without the fleet's lock by metrics). */
    private final Map<AnomalyKind, AtomicLong> errors = new ConcurrentHashMap<>();
    private final Map<AnomalyKind, Double> errorLogged = new EnumMap<>(AnomalyKind.class);
    /** What each detector's evaluations cost since start (filled once here, read without the lock by metrics). */
    private final Map<AnomalyKind, DetectorCost> costs = new EnumMap<>(AnomalyKind.class);

    /** Evaluations and their seconds per detector since start, by kind: every detector the fleet runs. */
    Map<String, DetectorCost.Total> detectorCosts() {
        Map<String, DetectorCost.Total> out = new TreeMap<>();
        costs.forEach((k, v) -> out.put(k.wireName(), v.total()));
        return out;
    }

    /** Failures per detector since start, by kind: only detectors that failed. */
    Map<String, Long> detectorErrors() {
        Map<String, Long> out = new TreeMap<>();
        errors.forEach((k, v) -> out.put(k.wireName(), v.get()));
        return out;
    }

    EvaluationSchedule(Registry registry, List<Detector> detectors, Predictor predictor,
            RunObservations observations, Outbox outbox) {
        this.registry = registry;
        this.settings = registry.settings;
        this.summaryIntervalSeconds = settings.summaryInterval().toMillis() / 1000.0;
        this.detectors = detectors;
        for (Detector d : this.detectors) {
            costs.put(d.kind(), new DetectorCost());
        }
        this.predictor = predictor;
        this.observations = observations;
        this.outbox = outbox;
    }

    private void publish(RunState run, Transition t) {
        outbox.anomaly(run.runId(), t.anomaly(), t.raised(), observedTraining(run));
    }

    /** Whether the run was ever seen training (a step, a spec, a failure, a GPU reading): only then are people told. */
    private boolean observedTraining(RunState run) {
        if (run.lastCountedStep() >= 0 || run.registeredSpec() != null || run.failure() != null
                || run.tracker().isActive(AnomalyKind.RUN_FAILED)) {
            return true;
        }
        for (GpuState g : registry.runGpus(run)) {
            if (g.latest != null) {
                return true;
            }
        }
        return false;
    }

    /** The run's summary is due for listeners. */
    void notifyChanged(RunState run, double now) {
        run.notified(now);
        if (outbox.wantsRunChanges()) {
            outbox.changed(observations.summarize(run, now));
        }
    }

    void stepsCounted(String runId, List<StepEvent> counted) {
        outbox.stepsApplied(runId, List.copyOf(counted));
    }

    /**
     * The run ended: new input is judged first, then its active anomalies end with it ({@link Anomaly#endedWithRun}),
     * except {@code run_failed}, which stays.
     */
    void end(RunState run, double now) {
        if (run.ended()) {
            return;
        }
        if (run.inputSinceJudged()) {
            evaluate(run, now);
        }
        run.end(now);
        for (Transition t : run.tracker().endAllExcept(now, AnomalyKind.RUN_FAILED)) {
            publish(run, t);
        }
        outbox.ended(observations.summarize(run, now));
    }

    /** Why the run's processes failed: judged at once ({@code run_failed}); ignored for a run its user stopped. */
    void fail(RunState run, RunFailure failure, String host, double now) {
        if (run.stoppedBy() != null) {
            return; // its user stopped it: the traceback the signal left is how it stopped, not a failure
        }
        run.fail(failure, host, now);
        evaluate(run, now);
    }

    /** What only time changes (a stall growing, a sustain running out) is judged by the tick at least this often. */
    static final double IDLE_EVALUATE_SECONDS = 5;
    static final double IDLE_EVALUATE_MAX_SECONDS = 15;

    /**
     * How long a run goes without input before the tick judges it: half as long again as its usual gap between bursts
     * of input, within [{@value #IDLE_EVALUATE_SECONDS}, {@value #IDLE_EVALUATE_MAX_SECONDS}] s, so a run whose agent
     * ships every 10 s is not also judged halfway between two batches.
     */
    static double idleSeconds(RunState run) {
        double gap = run.burstGap() * 1.5;
        return gap > IDLE_EVALUATE_SECONDS ? Math.min(gap, IDLE_EVALUATE_MAX_SECONDS) : IDLE_EVALUATE_SECONDS;
    }

    /** Inputs less than this apart are one burst (a batch and the steps request its agent sends right after it). */
    static final double BURST_SECONDS = 1;

    /** A run on several nodes is judged on arrival at most this often, whatever its agents' batches. */
    static final double SPACING_MAX_SECONDS = 5;

    /**
     * The least time between two judgements of a run on arriving input: {@link FleetSettings#evaluateEvery()}, and
     * for a run on several nodes (whose agents each bring a share of its readings) half its agents' gap between
     * batches when that is longer, at most {@value #SPACING_MAX_SECONDS} s. Urgent input is judged at once.
     */
    double spacing(RunState run, boolean urgent) {
        double every = settings.evaluateEvery().toMillis() / 1000.0;
        if (urgent || run.hosts().size() < 2 || !(run.agentBatchGap() / 2 > every)) {
            return every;
        }
        return Math.max(every, Math.min(run.agentBatchGap() / 2, SPACING_MAX_SECONDS));
    }

    /** New input of the run arrived: it is judged now unless it was judged less than its {@link #spacing} ago. */
    void maybeEvaluate(RunState run, double now, boolean urgent) {
        run.input(now, urgent, BURST_SECONDS);
        evaluateIfDue(run, now, false);
    }

    /**
     * The fleet's tick: the run is judged when input arrived since its last evaluation (and evaluateEvery has
     * passed), or after {@link #idleSeconds} without input; its summary is sent when due.
     */
    void onTick(RunState run, double now) {
        evaluateIfDue(run, now, !run.inputSinceJudged());
    }

    private void evaluateIfDue(RunState run, double now, boolean idle) {
        // A clock stepped back (NTP, a resumed VM) makes the times since negative: treat them as due, or the run's
        // detectors and summaries would wait until the clock caught up again.
        double sinceEvaluated = now - run.lastEvaluated();
        double every = spacing(run, run.urgentInput());
        if (sinceEvaluated < 0 || sinceEvaluated >= (idle ? Math.max(every, idleSeconds(run)) : every)) {
            evaluate(run, now);
        }
        double sinceNotified = now - run.lastChangeNotified();
        if (sinceNotified < 0) {
            sinceNotified = Double.POSITIVE_INFINITY;
        }
        if (run.summaryDue() && sinceNotified >= summaryIntervalSeconds
                || run.dirty() && sinceNotified >= CHANGE_NOTIFY_SECONDS) {
            notifyChanged(run, now);
        }
    }

    void evaluate(RunState run, double now) {
        run.judged(now);
        boolean onlyFailure = false;
        if (run.ended()) {
            // An ended run is judged no more, except for why it ended: a failure reported after the end.
            if (run.failure() == null || run.tracker().isActive(AnomalyKind.RUN_FAILED)) {
                return;
            }
            onlyFailure = true;
        }
        run.steps().trim(now);
        if (run.ranks() != null) {
            run.ranks().trim(now);
        }
        Evaluation ctx = new Evaluation(run, now);
        for (Detector d : detectors) {
            if (onlyFailure && d.kind() != AnomalyKind.RUN_FAILED) {
                continue;
            }
            if (d.everySeconds() > 0 && !run.askDue(d.kind(), now, d.everySeconds())) {
                continue; // asked recently, and nothing else about the run changed since
            }
            Optional<Transition> t;
            long started = System.nanoTime();
            try {
                t = run.tracker().update(now, d.kind(), d.evaluate(ctx, run.tracker().isActive(d.kind())));
                costs.get(d.kind()).add(System.nanoTime() - started);
            } catch (RuntimeException e) {
                costs.get(d.kind()).add(System.nanoTime() - started);
                // A detector bug must not stop ingest or the other detectors: counted, and logged with its stack at
                // most once a minute per detector.
                long count = errors.computeIfAbsent(d.kind(), k -> new AtomicLong()).incrementAndGet();
                if (FleetLog.due(errorLogged, d.kind(), now)) {
                    LOG.log(System.Logger.Level.ERROR, "detector " + d.kind().wireName() + " failed on run "
                            + run.runId() + " (" + count + " failures so far; logged at most once a minute)", e);
                }
                continue;
            }
            if (t.isPresent()) {
                run.transition();
                publish(run, t.get());
            }
        }
    }

    /** The {@link RunContext} of one evaluation, over the live state (valid only under the lock). */
    private final class Evaluation implements RunContext {
        private final RunState run;
        private final double now;
        private List<GpuSeries> gpuSeries;

        Evaluation(RunState run, double now) {
            this.run = run;
            this.now = now;
        }

        @Override
        public String runId() {
            return run.runId();
        }

        @Override
        public double now() {
            return now;
        }

        @Override
        public RunSpec spec() {
            return run.estimate() != null ? run.estimate().spec() : run.registeredSpec();
        }

        @Override
        public Estimate estimate() {
            return run.estimate();
        }

        @Override
        public boolean featuresDefaulted() {
            RunSpec given = run.registeredSpec();
            return given != null && given.features() == null && given.textFeatures() == null
                    && given.vaeFeatures() == null;
        }

        @Override
        public StepSeries steps() {
            return run.steps();
        }

        @Override
        public RankSeries ranks() {
            return run.ranks() != null ? run.ranks() : RankSeries.NONE;
        }

        @Override
        public List<GpuSeries> gpus() {
            if (gpuSeries == null) {
                List<GpuSeries> out = new ArrayList<>();
                for (GpuState g : registry.runGpus(run)) {
                    g.window.trim(now);
                    out.add(g.window);
                }
                gpuSeries = out;
            }
            return gpuSeries;
        }

        @Override
        public List<XidRecord> xids() {
            List<XidRecord> out = new ArrayList<>(run.restoredXids());
            for (GpuState g : registry.runGpus(run)) {
                out.addAll(g.recentXids);
            }
            return out;
        }

        @Override
        public List<AgentStatus> agents() {
            return registry.agentsOn(run.hosts().keySet()).stream()
                    .map(a -> new AgentStatus(a.agentId, a.host, a.lastSeen, a.intervalSeconds())).toList();
        }

        @Override
        public Repricing reprice(ObservedRun observed, RunSpec target) {
            try {
                return predictor.reprice(observed, target).orElse(null);
            } catch (InvalidSpecException e) {
                return null;
            }
        }

        @Override
        public Estimate whatIf(RunSpec variant) {
            try {
                return predictor.estimate(variant);
            } catch (InvalidSpecException e) {
                return null;
            }
        }

        @Override
        public OptionalInt latentDownsample() {
            return observations.latentDownsample(run);
        }

        @Override
        public List<RankProcess> rankProcesses() {
            List<RankProcess> out = new ArrayList<>();
            for (Map.Entry<String, RunState.HostPart> part : run.hosts().entrySet()) {
                for (Map.Entry<Integer, RunState.RankProc> e : part.getValue().procs.entrySet()) {
                    RunState.RankProc p = e.getValue();
                    out.add(new RankProcess(e.getKey(), part.getKey(), p.pid,
                            p.gpuUuid, p.state, p.cpuRate(30), p.rss, p.workers, p.workersRss, p.ts));
                }
            }
            out.sort(Comparator.comparingInt(RankProcess::rank));
            return out;
        }

        @Override
        public List<HostMemorySeries> hostMemory() {
            return run.hosts().keySet().stream().<HostMemorySeries>map(registry::hostMemory).filter(Objects::nonNull)
                    .toList();
        }

        @Override
        public double stepsLateUntil() {
            return run.stepsLateUntil();
        }

        @Override
        public String announcedPhase() {
            return run.phaseKind() != null && !(run.phaseTs() < run.lastCountedTs()) ? run.phaseKind() : null;
        }

        @Override
        public double announcedPhaseTs() {
            return run.phaseTs();
        }

        @Override
        public long oomSkips() {
            return run.oomSkips();
        }

        @Override
        public double oomSkipTs() {
            return run.oomSkipTs();
        }

        @Override
        public double samplingTs() {
            return run.samplingTs();
        }

        @Override
        public RunFailure failure() {
            return run.failure();
        }

        @Override
        public String failureHost() {
            return run.failureHost();
        }

        @Override
        public boolean wasActiveSince(AnomalyKind kind, double sinceTs) {
            return run.tracker().snapshot().stream().anyMatch(a -> a.kind() == kind
                    && (a.active() || a.resolvedAt() != null && a.resolvedAt() >= sinceTs));
        }

        @Override
        public boolean wasRaised(AnomalyKind kind) {
            return run.tracker().snapshot().stream().anyMatch(a -> a.kind() == kind);
        }

        @Override
        public LossHealth loss() {
            return run.losses();
        }

        @Override
        public Map<Integer, String> gpuOfRank() {
            Map<Integer, String> out = new HashMap<>();
            for (RunState.HostPart part : run.hosts().values()) {
                part.ranksByGpu.forEach((uuid, ranks) -> ranks.forEach(r -> out.putIfAbsent(r, uuid)));
            }
            return out;
        }

        @Override
        public boolean isActive(AnomalyKind kind) {
            return run.tracker().isActive(kind);
        }
    }
}
