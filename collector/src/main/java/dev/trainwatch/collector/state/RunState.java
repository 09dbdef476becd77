package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.AnomalyTracker;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunEnding;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
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
        int head;
        int size;

        void cpu(double at, double seconds) {
            if (size > 0 && at <= cpuTs[(head + size - 1) % CPU_READINGS]) {
                return;
            }
            int i = (head + size) % CPU_READINGS;
            if (size == CPU_READINGS) {
                head = (head + 1) % CPU_READINGS;
            } else {
                size++;
            }
            cpuTs[i] = at;
            cpu[i] = seconds;
        }

        /** CPU seconds per wall second between the newest reading and the oldest at least {@code span} s older. */
        double cpuRate(double span) {
            if (size < 2) {
                return Double.NaN;
            }
            int newest = (head + size - 1) % CPU_READINGS;
            for (int k = size - 2; k >= 0; k--) {
                int i = (head + k) % CPU_READINGS;
                double dt = cpuTs[newest] - cpuTs[i];
                if (dt >= span || k == 0) {
                    return dt > 0 ? Math.max(0, cpu[newest] - cpu[i]) / dt : Double.NaN;
                }
            }
            return Double.NaN;
        }
    }

    /** The newest checkpoint or evaluation phase the log announced, and when; null / NaN when none. */
    String phaseKind;
    double phaseTs = Double.NaN;
    /** When the log last announced a sampling or evaluation phase; NaN when never. */
    double samplingTs = Double.NaN;

    final String runId;
    final double firstSeen;
    double lastSeen;
    /** The spec as registered (before the estimator resolved it). */
    RunSpec registeredSpec;
    Estimate estimate;
    boolean synthetic;
    /** The run's step series: each training step once (the lead rank's reports when ranks report; see RankWindows). */
    final StepWindow steps;
    /** Reports by rank, created when the first report naming a rank arrives. */
    RankWindows ranks;
    /** Step, rank (-1: none) and time of the newest report counted in {@link #steps}. */
    long lastCountedStep = -1;
    int lastCountedRank = -1;
    double lastCountedTs = Double.NEGATIVE_INFINITY;
    final AnomalyTracker tracker;
    final Map<String, HostPart> hosts = new LinkedHashMap<>();
    long lastStep = -1;
    double lastStepTs = Double.NaN;
    /** See {@link dev.trainwatch.collector.detect.RunContext#stepsLateUntil()}. */
    double stepsLateUntil = Double.NEGATIVE_INFINITY;
    double peakMemory = Double.NaN;
    boolean ended;
    double endedAt = Double.NaN;
    double lastEvaluated = Double.NEGATIVE_INFINITY;
    /**
     * Anomaly transitions of the run so far (raised, changed, resolved): see
     * {@link dev.trainwatch.collector.detect.Detector#everySeconds()}.
     */
    long transitions;
    /** For detectors asked less often: when each was last asked and the run's transitions then. */
    final Map<AnomalyKind, double[]> lastAsked =
            new EnumMap<>(AnomalyKind.class);
    /**
     * Inputs of the run so far (readings, steps, events), and how many of them its last judgement saw: a count, not
     * a time, so input that arrives in the same millisecond as a judgement is still new to the next one.
     */
    long inputs;
    long inputsJudged;
    /**
     * When the run's latest burst of input began (inputs less than a second apart are one burst: a batch and its
     * steps request), and the time between the two latest bursts (NaN until there are two): how long the run
     * usually goes without input, which sets how long it may before it is judged without (see
     * {@link EvaluationSchedule#idleSeconds}).
     */
    double burstAt = Double.NaN;
    double burstGap = Double.NaN;
    /** The batch gap of the agent whose batch touched the run last (see {@link EvaluationSchedule#spacing}). */
    double agentBatchGap = Double.NaN;
    /** Input since the last judgement that is judged within evaluateEvery whatever the spacing. */
    boolean urgentInput;
    double lastChangeNotified = Double.NEGATIVE_INFINITY;
    boolean dirty;
    /** The run's numbers moved materially since its summary was last sent (sent after the summary interval). */
    boolean summaryDue;
    boolean gpuFilledFromObservation;
    /** Whether the "spec without data" hint was logged (once per run). */
    boolean unmatchedLogged;
    int largestBucketCells;
    int largestBucketHeight;
    int largestBucketWidth;
    /**
     * XIDs known only from an anomaly restored after a restart (the GPU states that held them are gone): they keep
     * {@code xid_error} active for its usual time after the newest XID instead of resolving it on the first
     * evaluation.
     */
    final List<RunContext.XidRecord> restoredXids = new ArrayList<>();
    /** Why the run's processes failed (from {@code trainwatch run} or an agent's {@code run_failed}), or null. */
    RunFailure failure;
    /** What an agent saw at the run's end (the log it read, whether that named a cause, the processes' outputs). */
    RunEnding ending;
    String failureHost;
    double failureTs = Double.NaN;
    /**
     * How the run's own user stopped it (the signal trainwatch received and passed on, e.g. {@code SIGINT}), or
     * null: its exit is then no failure, and it ends as stopped.
     */
    String stoppedBy;
    /** The run's losses and grad norms, for the loss detectors. */
    final LossWindow losses = new LossWindow();
    /** Where the run's time and energy went since the collector first saw it (or restored it). */
    RunAccounting accounting;

    RunState(String runId, double now, StepWindow steps, AnomalyTracker tracker) {
        this.runId = runId;
        this.firstSeen = now;
        this.lastSeen = now;
        this.steps = steps;
        this.tracker = tracker;
        this.accounting = new RunAccounting(now);
    }

    Set<String> gpuUuids() {
        Set<String> all = new LinkedHashSet<>();
        for (HostPart h : hosts.values()) {
            all.addAll(h.gpuUuids);
        }
        return all;
    }
}
