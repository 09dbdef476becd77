package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Everything a {@link Detector} may look at for one run at one evaluation. Built by the run state under its
 * lock; valid only for the duration of the evaluation.
 */
public interface RunContext {

    String runId();

    double now();

    /** The spec as resolved by the estimator, null before one is registered. */
    RunSpec spec();

    /** The estimate, null before a spec is registered. */
    Estimate estimate();

    /**
     * Whether the registered spec left the features (online or precomputed) to the model's default: then what the
     * features cost is the default recipe's, not what the run was said to do.
     */
    boolean featuresDefaulted();

    /** The run's step series: each training step once (with ranks, the lead rank's reports; see {@link #ranks}). */
    StepSeries steps();

    /** Each rank's own reports, when the log or the pushes name ranks; {@link RankSeries#NONE} otherwise. */
    RankSeries ranks();

    /** The run's GPUs (attributed by agents), each with its window. */
    List<GpuSeries> gpus();

    /** The newest XID errors on the run's GPUs (up to 32 per GPU, any age; informational ones included). */
    List<XidRecord> xids();

    List<AgentStatus> agents();

    /** The estimate of a variant of the run's spec; null when the estimator refuses it. */
    Estimate whatIf(RunSpec variant);

    /**
     * The run re-priced with a change, anchored on what was observed ({@code trainwatch estimate --from-run});
     * null when the estimator cannot or refuses.
     */
    Repricing reprice(ObservedRun observed, RunSpec target);

    /** Pixels per latent cell of the run's model (8 for SD/SDXL VAE, 32 for DC-AE), when known. */
    OptionalInt latentDownsample();

    /** Each rank's process as the agents last read it (empty when agents report no ranks), lowest rank first. */
    List<RankProcess> rankProcesses();

    List<HostMemorySeries> hostMemory();

    /**
     * Until when (on {@link #now()}'s clock) the run's step reports are known to come late: an agent is delivering a
     * backlog — a steps request whose newest report was read long before the request was sent (its spool replaying
     * after the collector was away). Silence before then is late data, not a stopped run. Negative infinity when
     * nothing says so.
     */
    double stepsLateUntil();

    /**
     * The phase the log announced after the run's newest step report ({@code checkpoint}, {@code checkpoint_saved},
     * {@code evaluation}, {@code caching}, {@code quantizing}), or null.
     */
    String announcedPhase();

    /** When that phase was announced (unix seconds), NaN when none. */
    double announcedPhaseTs();

    /** CUDA OOMs the trainer caught and skipped the batch of (ai-toolkit), as its agents reported them; 0 when none. */
    long oomSkips();

    /** When the newest of them was reported (unix seconds), NaN when none. */
    double oomSkipTs();

    /** When the log last announced a sampling or evaluation phase (unix seconds), NaN when never. */
    double samplingTs();

    /** Why the run's processes failed, when a watcher said so; null otherwise. */
    RunFailure failure();

    String failureHost();

    /** Whether an anomaly of {@code kind} was raised on the run at any time (active or in its history). */
    boolean wasRaised(AnomalyKind kind);

    /** Whether an anomaly of {@code kind} was active at any time since {@code sinceTs}. */
    boolean wasActiveSince(AnomalyKind kind, double sinceTs);

    /** The run's loss readings (finite losses, non-finite streaks). */
    LossHealth loss();

    /** The GPU (UUID) each rank runs on, when the agents report ranks; empty otherwise. */
    Map<Integer, String> gpuOfRank();

    /** Whether an anomaly of {@code kind} is active on the run (detectors defer to one another). */
    boolean isActive(AnomalyKind kind);

    record XidRecord(double ts, String host, String gpuUuid, long xid) {
    }

    /** An agent's liveness. {@code intervalSeconds} is its polling interval (null when it did not say). */
    record AgentStatus(String agentId, String host, double lastSeenTs, Double intervalSeconds) {
    }
}
