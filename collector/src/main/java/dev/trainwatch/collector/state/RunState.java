package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.AnomalyTracker;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
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
        boolean ended;
    }

    final String runId;
    final double firstSeen;
    double lastSeen;
    /** The spec as registered (before the estimator resolved it). */
    RunSpec registeredSpec;
    Estimate estimate;
    boolean synthetic;
    final StepWindow steps;
    final AnomalyTracker tracker;
    final Map<String, HostPart> hosts = new LinkedHashMap<>();
    long lastStep = -1;
    double lastStepTs = Double.NaN;
    double peakMemory = Double.NaN;
    boolean ended;
    double endedAt = Double.NaN;
    double lastEvaluated = Double.NEGATIVE_INFINITY;
    double lastChangeNotified = Double.NEGATIVE_INFINITY;
    boolean dirty;
    boolean gpuFilledFromObservation;
    int largestBucketCells;
    int largestBucketHeight;
    int largestBucketWidth;

    RunState(String runId, double now, StepWindow steps, AnomalyTracker tracker) {
        this.runId = runId;
        this.firstSeen = now;
        this.lastSeen = now;
        this.steps = steps;
        this.tracker = tracker;
    }

    Set<String> gpuUuids() {
        Set<String> all = new LinkedHashSet<>();
        for (HostPart h : hosts.values()) {
            all.addAll(h.gpuUuids);
        }
        return all;
    }
}
