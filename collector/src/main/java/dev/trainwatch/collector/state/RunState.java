package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.AnomalyTracker;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.state.window.LossWindow;
import dev.trainwatch.collector.state.window.RankBudget;
import dev.trainwatch.collector.state.window.RankWindows;
import dev.trainwatch.collector.state.window.Ring;
import dev.trainwatch.collector.state.window.StepWindow;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.RunEnding;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** One run: spec, estimate, step window, attribution per host, anomalies. Guarded by the fleet's lock. */
final class RunState {

    /** What one host's agent says about the run. */
    static final class HostPart {
        final Set<String> gpuUuids = new LinkedHashSet<>();
        final Map<String, List<Integer>> ranksByGpu = new LinkedHashMap<>();
        /** Each rank's process as the agent read it, with its recent CPU-time readings. */
        final Map<Integer, RankProc> procs = new LinkedHashMap<>();
        boolean ended;
    }

    /** A rank's process: newest reading and up to {@value #CPU_READINGS} (time, CPU seconds) readings. */
    static final class RankProc {
        static final int CPU_READINGS = 64;
        long pid;
        String gpuUuid;
        String state;
        double rss = Double.NaN;
        int workers = -1;
        double workersRss = Double.NaN;
        double ts;
        final double[] cpuTs = new double[CPU_READINGS];
        final double[] cpu = new double[CPU_READINGS];
        final Ring readings = new Ring(CPU_READINGS);

        void cpu(double at, double seconds) {
            if (readings.size() > 0 && at <= cpuTs[readings.newest()]) {
                return;
            }
            int i = readings.append();
            cpuTs[i] = at;
            cpu[i] = seconds;
        }

        /** CPU seconds per wall second between the newest reading and the oldest at least {@code span} s older. */
        double cpuRate(double span) {
            if (readings.size() < 2) {
                return Double.NaN;
            }
            int newest = readings.newest();
            for (int k = readings.size() - 2; k >= 0; k--) {
                int i = readings.slot(k);
                double dt = cpuTs[newest] - cpuTs[i];
                if (dt >= span || k == 0) {
                    return dt > 0 ? Math.max(0, cpu[newest] - cpu[i]) / dt : Double.NaN;
                }
            }
            return Double.NaN;
        }
    }

    private final String runId;
    private final double firstSeen;
    /** The run's step series: each training step once (the lead rank's reports when ranks report; see RankWindows). */
    private final StepWindow steps;
    private final AnomalyTracker tracker;
    private final Map<String, HostPart> hosts = new LinkedHashMap<>();
    /** For detectors asked less often: when each was last asked and the run's transitions then. */
    private final Map<AnomalyKind, double[]> lastAsked = new EnumMap<>(AnomalyKind.class);
    /** XIDs known only from an anomaly restored after a restart: they keep {@code xid_error} active its usual time. */
    private final List<RunContext.XidRecord> restoredXids = new ArrayList<>();
    private final LossWindow losses = new LossWindow();

    private double lastSeen;
    /** The newest checkpoint or evaluation phase the log announced, and when; null / NaN when none. */
    private String phaseKind;
    private double phaseTs = Double.NaN;
    /** That phase's progress bar, as last reported; null when it shows none. */
    private PhaseProgress phaseProgress;
    /** CUDA OOMs the trainer caught and skipped (oom_skipped events), and when the newest was reported. */
    private long oomSkips;
    private double oomSkipTs = Double.NaN;
    /** When the log last announced a sampling or evaluation phase; NaN when never. */
    private double samplingTs = Double.NaN;
    /** The spec as registered (before the estimator resolved it). */
    private RunSpec registeredSpec;
    private Estimate estimate;
    private boolean gpuFilledFromObservation;
    private boolean synthetic;
    /** Reports by rank, created when the first report naming a rank arrives. */
    private RankWindows ranks;
    /** Step, rank (-1: none) and time of the newest report counted in {@link #steps}. */
    private long lastCountedStep = -1;
    private int lastCountedRank = -1;
    private double lastCountedTs = Double.NEGATIVE_INFINITY;
    private long lastStep = -1;
    private double lastStepTs = Double.NaN;
    /** See {@link RunContext#stepsLateUntil()}. */
    private double stepsLateUntil = Double.NEGATIVE_INFINITY;
    private double peakMemory = Double.NaN;
    private int largestBucketCells;
    private int largestBucketHeight;
    private int largestBucketWidth;
    private boolean ended;
    private double endedAt = Double.NaN;
    /** Why the run's processes failed (from {@code trainwatch run} or an agent's {@code run_failed}), or null. */
    private RunFailure failure;
    private String failureHost;
    private double failureTs = Double.NaN;
    /** What an agent saw at the run's end (the log it read, whether that named a cause, the processes' outputs). */
    private RunEnding ending;
    /** How the run's own user stopped it (e.g. {@code SIGINT}), or null: its exit is then no failure. */
    private String stoppedBy;
    /** Where the run's time and energy went since the collector first saw it (or restored it). */
    private RunAccounting accounting;

    private double lastEvaluated = Double.NEGATIVE_INFINITY;
    /** Anomaly transitions of the run so far (raised, changed, resolved). */
    private long transitions;
    /**
     * Inputs of the run so far, and how many of them its last judgement saw: a count, not a time, so input that
     * arrives in the same millisecond as a judgement is still new to the next one.
     */
    private long inputs;
    private long inputsJudged;
    /** When the latest burst of input began (inputs under a second apart are one burst), and the gap between the two latest. */
    private double burstAt = Double.NaN;
    private double burstGap = Double.NaN;
    /** The batch gap of the agent whose batch touched the run last (see {@link EvaluationSchedule#spacing}). */
    private double agentBatchGap = Double.NaN;
    /** Input since the last judgement that is judged within evaluateEvery whatever the spacing. */
    private boolean urgentInput;
    private double lastChangeNotified = Double.NEGATIVE_INFINITY;
    private boolean dirty;
    /** The run's numbers moved materially since its summary was last sent. */
    private boolean summaryDue;
    /** Whether the "spec without data" hint was logged (once per run). */
    private boolean unmatchedLogged;

    RunState(String runId, double now, StepWindow steps, AnomalyTracker tracker) {
        this.runId = runId;
        this.firstSeen = now;
        this.lastSeen = now;
        this.steps = steps;
        this.tracker = tracker;
        this.accounting = new RunAccounting(now);
    }

    /** A run brought back from its summary after a restart; its time before the restart is not accounted. */
    void restore(RunSummary summary, Estimate priced, double now) {
        registeredSpec = summary.spec();
        estimate = priced;
        lastSeen = summary.lastSeenTs() != null ? summary.lastSeenTs() : firstSeen;
        if (summary.lastStep() != null) {
            lastStep = summary.lastStep();
            lastStepTs = summary.lastStepTs() != null ? summary.lastStepTs() : Double.NaN;
        }
        if (summary.peakMemoryBytes() != null) {
            peakMemory = summary.peakMemoryBytes();
        }
        synthetic = Boolean.TRUE.equals(summary.synthetic());
        ended = summary.ended();
        endedAt = summary.endedAt() != null ? summary.endedAt() : Double.NaN;
        lastChangeNotified = now;
        accounting = new RunAccounting(now);
    }

    void seen(double now) {
        lastSeen = now;
    }

    /** New steps were applied: the run changed and its summary is due. */
    void stepsApplied(double now) {
        lastSeen = now;
        dirty = true;
        summaryDue = true;
    }

    /** An agent's batch touched the run. */
    void touchedByBatch(double agentBatchGap) {
        this.agentBatchGap = agentBatchGap;
        dirty = true;
    }

    void markDirty() {
        dirty = true;
    }

    /** Its change was sent to the listeners. */
    void notified(double now) {
        lastChangeNotified = now;
        dirty = false;
        summaryDue = false;
    }

    void bindSpec(RunSpec spec, Estimate priced, boolean gpuFilled) {
        registeredSpec = spec;
        estimate = priced;
        gpuFilledFromObservation = gpuFilled;
    }

    /** The spec's GPU was filled from what NVML named (or cannot be: {@code priced} null): tried once. */
    void gpuFilled(Estimate priced) {
        if (priced != null) {
            estimate = priced;
        }
        gpuFilledFromObservation = true;
    }

    void markSynthetic() {
        synthetic = true;
    }

    void stop(String how) {
        stoppedBy = how;
    }

    /** True the first time only: the "spec without data" hint is logged once per run. */
    boolean firstUnmatchedLog() {
        boolean first = !unmatchedLogged;
        unmatchedLogged = true;
        return first;
    }

    void phase(String kind, double ts, PhaseProgress progress) {
        phaseKind = kind;
        phaseTs = ts;
        phaseProgress = progress;
        if ("evaluation".equals(kind) || "sampling".equals(kind)) {
            samplingTs = ts;
        }
    }

    /** The trainer caught a CUDA OOM and skipped the batch; {@code count} is its own running count when it said one. */
    void oomSkipped(Long count, double ts) {
        oomSkips = Math.max(oomSkips + 1, count == null ? 0 : count);
        oomSkipTs = ts;
    }

    /** A GPU of the run used this much memory: a new peak makes the summary due. */
    void memoryUsed(double bytes) {
        if (!Double.isNaN(bytes) && !(bytes <= peakMemory)) {
            peakMemory = bytes;
            summaryDue = true;
        }
    }

    void end(double now) {
        ended = true;
        endedAt = now;
    }

    void recordEnding(RunEnding seen) {
        ending = seen;
    }

    /** The same run id is running again (e.g. a requeued Slurm job): how the last attempt ended is not its story. */
    void reopen() {
        ended = false;
        endedAt = Double.NaN;
        failure = null;
        ending = null;
        stoppedBy = null;
    }

    void fail(RunFailure why, String host, double now) {
        failure = why;
        failureHost = host;
        failureTs = now;
        dirty = true;
        summaryDue = true;
    }

    void clearFailure() {
        failure = null;
    }

    void stepsLateUntil(double until) {
        stepsLateUntil = until;
    }

    RankWindows ranksOrCreate(double windowSeconds, RankBudget budget) {
        if (ranks == null) {
            ranks = new RankWindows(windowSeconds, budget);
        }
        return ranks;
    }

    /** A report counted as the run's step: into its accounting, losses and step series. */
    void countStep(StepEvent e, int rank, double ts, double encodingSecondsPerStep) {
        accounting.step(e, ts, encodingSecondsPerStep);
        losses.add(e, ts);
        steps.add(e, ts);
        lastCountedStep = e.step();
        lastCountedRank = rank;
        lastCountedTs = ts;
    }

    /** Any well-formed report: the newest step seen, and the largest aspect-ratio bucket. */
    void stepSeen(StepEvent e, double ts) {
        if (e.step() >= lastStep) {
            lastStep = e.step();
            lastStepTs = ts;
        }
        if (e.bucketHeight() != null && e.bucketWidth() != null && e.bucketHeight() > 0 && e.bucketWidth() > 0) {
            long cells = (long) e.bucketHeight() * e.bucketWidth();
            if (cells > largestBucketCells) {
                largestBucketCells = (int) Math.min(Integer.MAX_VALUE, cells);
                largestBucketHeight = e.bucketHeight();
                largestBucketWidth = e.bucketWidth();
            }
        }
    }

    /** New input arrived; inputs under {@code burstSeconds} apart are one burst. */
    void input(double now, boolean urgent, double burstSeconds) {
        inputs++;
        urgentInput |= urgent;
        double sinceBurst = now - burstAt;
        if (Double.isNaN(sinceBurst) || sinceBurst < 0 || sinceBurst >= burstSeconds) {
            burstGap = sinceBurst >= 0 ? sinceBurst : Double.NaN;
            burstAt = now;
        }
    }

    boolean inputSinceJudged() {
        return inputs != inputsJudged;
    }

    void judged(double now) {
        lastEvaluated = now;
        inputsJudged = inputs;
        urgentInput = false;
    }

    /** An anomaly of the run was raised, changed or resolved. */
    void transition() {
        transitions++;
        summaryDue = true;
    }

    /**
     * Whether a detector asked at most every {@code everySeconds} is due: not asked that recently, or something else
     * about the run changed since. Being due records the asking.
     */
    boolean askDue(AnomalyKind kind, double now, double everySeconds) {
        double[] asked = lastAsked.get(kind);
        if (asked != null && now >= asked[0] && now - asked[0] < everySeconds && asked[1] == transitions) {
            return false;
        }
        lastAsked.put(kind, new double[] {now, transitions});
        return true;
    }

    String runId() { return runId; }
    double firstSeen() { return firstSeen; }
    double lastSeen() { return lastSeen; }
    StepWindow steps() { return steps; }
    AnomalyTracker tracker() { return tracker; }
    Map<String, HostPart> hosts() { return hosts; }
    List<RunContext.XidRecord> restoredXids() { return restoredXids; }
    LossWindow losses() { return losses; }
    String phaseKind() { return phaseKind; }
    double phaseTs() { return phaseTs; }
    PhaseProgress phaseProgress() { return phaseProgress; }
    long oomSkips() { return oomSkips; }
    double oomSkipTs() { return oomSkipTs; }
    double samplingTs() { return samplingTs; }
    RunSpec registeredSpec() { return registeredSpec; }
    Estimate estimate() { return estimate; }
    boolean gpuFilledFromObservation() { return gpuFilledFromObservation; }
    boolean synthetic() { return synthetic; }
    RankWindows ranks() { return ranks; }
    long lastCountedStep() { return lastCountedStep; }
    int lastCountedRank() { return lastCountedRank; }
    double lastCountedTs() { return lastCountedTs; }
    long lastStep() { return lastStep; }
    double lastStepTs() { return lastStepTs; }
    double stepsLateUntil() { return stepsLateUntil; }
    double peakMemory() { return peakMemory; }
    int largestBucketCells() { return largestBucketCells; }
    int largestBucketHeight() { return largestBucketHeight; }
    int largestBucketWidth() { return largestBucketWidth; }
    boolean ended() { return ended; }
    double endedAt() { return endedAt; }
    RunFailure failure() { return failure; }
    String failureHost() { return failureHost; }
    double failureTs() { return failureTs; }
    RunEnding ending() { return ending; }
    String stoppedBy() { return stoppedBy; }
    RunAccounting accounting() { return accounting; }
    double lastEvaluated() { return lastEvaluated; }
    double burstGap() { return burstGap; }
    double agentBatchGap() { return agentBatchGap; }
    boolean urgentInput() { return urgentInput; }
    double lastChangeNotified() { return lastChangeNotified; }
    boolean dirty() { return dirty; }
    boolean summaryDue() { return summaryDue; }

    Set<String> gpuUuids() {
        Set<String> all = new LinkedHashSet<>();
        for (HostPart h : hosts.values()) {
            all.addAll(h.gpuUuids);
        }
        return all;
    }
}
