package dev.trainwatch.collector.state.view;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/**
 * A run as {@code GET /v1/runs/{id}} shows it: serialise it with {@code Json.MAPPER} and that is the body.
 * A snapshot, immutable, taken under the fleet's lock.
 *
 * @param runId       the run id
 * @param spec        the spec as resolved by the estimator (null until one is registered)
 * @param estimate    the estimate (null until a spec is registered)
 * @param observed    what the run does
 * @param comparison  observed against predicted
 * @param anomalies   active anomalies first (critical before warning), then recently resolved ones
 * @param gpus        the run's GPUs
 * @param hosts       nodes the run spans
 * @param firstSeenTs unix seconds when the collector first heard of the run
 * @param lastSeenTs  unix seconds of the newest step report or agent attribution
 * @param ended       true once every agent reported the run's processes gone, or the run was ended explicitly
 * @param endedAt     unix seconds when it ended
 * @param synthetic   true for runs of the bundled demo scenario (never real hardware)
 * @param unmatched   for a spec that has had no data for a minute: the runs the agents do report (null otherwise)
 * @param hostMemory  the memory of the run's nodes as their agents last read it (null when none reports it)
 */
public record RunView(String runId, RunSpec spec, Estimate estimate, ObservedView observed,
                      ComparisonView comparison, List<Anomaly> anomalies, List<RunGpuView> gpus,
                      List<String> hosts, double firstSeenTs, Double lastSeenTs, boolean ended, Double endedAt,
                      Boolean synthetic, Unmatched unmatched, List<HostMemoryView> hostMemory, Ending ending) {

    /** A view without an ending. */
    public RunView(String runId, RunSpec spec, Estimate estimate, ObservedView observed, ComparisonView comparison,
                   List<Anomaly> anomalies, List<RunGpuView> gpus, List<String> hosts, double firstSeenTs,
                   Double lastSeenTs, boolean ended, Double endedAt, Boolean synthetic, Unmatched unmatched,
                   List<HostMemoryView> hostMemory) {
        this(runId, spec, estimate, observed, comparison, anomalies, gpus, hosts, firstSeenTs, lastSeenTs, ended,
                endedAt, synthetic, unmatched, hostMemory, null);
    }

    /**
     * An ended run whose log names no cause (its agent did not start it, so it knows no exit status): a crash whose
     * traceback went elsewhere (DiT logs steps to log.txt, tracebacks to stderr) looks like a clean end there.
     *
     * @param message  "ended without a cause in the log" and where to look
     * @param log      the log the agent read, or null when it read none
     * @param lastLine the log's last line, or null
     * @param outputs  the files the run's processes wrote stdout and stderr to (point {@code --log} at them)
     */
    public record Ending(String message, String log, String lastLine, List<String> outputs) {
    }

    /** A view without node memory. */
    public RunView(String runId, RunSpec spec, Estimate estimate, ObservedView observed, ComparisonView comparison,
                   List<Anomaly> anomalies, List<RunGpuView> gpus, List<String> hosts, double firstSeenTs,
                   Double lastSeenTs, boolean ended, Double endedAt, Boolean synthetic, Unmatched unmatched) {
        this(runId, spec, estimate, observed, comparison, anomalies, gpus, hosts, firstSeenTs, lastSeenTs, ended,
                endedAt, synthetic, unmatched, null);
    }

    /** A view without an identity hint. */
    public RunView(String runId, RunSpec spec, Estimate estimate, ObservedView observed, ComparisonView comparison,
                   List<Anomaly> anomalies, List<RunGpuView> gpus, List<String> hosts, double firstSeenTs,
                   Double lastSeenTs, boolean ended, Double endedAt, Boolean synthetic) {
        this(runId, spec, estimate, observed, comparison, anomalies, gpus, hosts, firstSeenTs, lastSeenTs, ended,
                endedAt, synthetic, null);
    }

    /**
     * A spec nothing reports: usually the agent names the run differently (a random {@code TORCHELASTIC_RUN_ID}
     * under {@code torchrun --standalone}, where the spec went to {@code $SLURM_JOB_ID}).
     *
     * @param seconds      how long the spec has been registered without any data
     * @param reportedRuns runs that do report data but have no spec (at most ten, newest first)
     * @param message      one line saying so and what to do
     */
    public record Unmatched(double seconds, List<String> reportedRuns, String message) {
    }
}
