package dev.trainwatch.collector.state.view;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/** A run as {@code GET /v1/runs/{id}} shows it (fields: docs/API.md): an immutable snapshot. */
public record RunView(String runId, RunSpec spec, Estimate estimate, ObservedView observed,
                      ComparisonView comparison, List<Anomaly> anomalies, List<RunGpuView> gpus,
                      List<String> hosts, double firstSeenTs, Double lastSeenTs, boolean ended, Double endedAt,
                      Boolean synthetic, Unmatched unmatched, List<HostMemoryView> hostMemory, Ending ending,
                      Phase phase) {

    /** The phase the log announced last (loading, caching, checkpoint, evaluation, …); {@code progress} may be null. */
    public record Phase(String kind, double ts, PhaseProgress progress) {
    }

    /**
     * An ended run whose log names no cause: a crash whose traceback went elsewhere (DiT logs steps to log.txt,
     * tracebacks to stderr) looks like a clean end there; {@code outputs} are where the processes wrote.
     */
    public record Ending(String message, String log, String lastLine, List<String> outputs) {
    }

    /** A spec nothing reports (the agent names the run differently), with the runs reported without a spec. */
    public record Unmatched(double seconds, List<String> reportedRuns, String message) {
    }
}
