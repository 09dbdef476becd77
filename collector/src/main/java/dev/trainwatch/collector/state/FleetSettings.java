package dev.trainwatch.collector.state;

import java.time.Duration;

/**
 * Sizes and limits of the collector's in-memory state. Immutable.
 *
 * @param maxRuns            runs tracked at once; beyond it an ended or silent run (a spec-only one after
 *                           {@code specRetention}) gives its slot, else the new run is refused (429 with Retry-After;
 *                           see {@link Slots}: a live run is never evicted)
 * @param maxGpus            GPUs tracked at once (also the budget of rank windows of all runs); beyond it a GPU silent
 *                           for 10 minutes gives its slot, else the batch bringing the new GPU is refused whole (429
 *                           with Retry-After: the agent spools it and retries), never accepted and its readings dropped
 * @param maxAgents          agents tracked at once; beyond it an agent silent for 10 minutes gives its slot, else the
 *                           new agent is refused (429 with Retry-After)
 * @param window             span of the rolling windows per GPU and per run
 * @param gpuWindowEntries   entries per GPU window; polls closer than {@code window / gpuWindowEntries} are
 *                           merged into one entry, so memory does not depend on the polling interval
 * @param stepWindowEntries  step reports kept per run
 * @param evaluateEvery      detectors of a run are re-evaluated at most this often on ingest ({@code tick}
 *                           always evaluates)
 * @param anomalyHistory     resolved anomalies kept per run for the run view
 * @param endedRunRetention  ended runs stay visible this long, then are forgotten (SQLite keeps them)
 * @param summaryInterval    a run whose numbers changed materially (new peak memory, new steps, an anomaly raised
 *                           or resolved) is sent to {@code onRunChanged} at most this often; other changes once a
 *                           minute. The run history writes what it is sent at most this often too, so a kill can
 *                           lose about two intervals
 * @param maxSpecs           runs held only as a registered spec (nothing observed yet) at once, within {@code maxRuns};
 *                           beyond it a new spec is refused (429), never one accepted before forgotten to make room
 * @param specRetention      how long a spec-only run is kept waiting for its run to report; only after it may its slot
 *                           go to a new run (logged and counted as forgotten)
 */
public record FleetSettings(int maxRuns, int maxGpus, int maxAgents, Duration window, int gpuWindowEntries,
                            int stepWindowEntries, Duration evaluateEvery, int anomalyHistory,
                            Duration endedRunRetention, Duration summaryInterval, int maxSpecs,
                            Duration specRetention) {

    /** Spec-only runs wait this long for their run by default (a job queued for a day still finds its spec). */
    public static final Duration DEFAULT_SPEC_RETENTION = Duration.ofHours(24);

    /** The settings with a quarter of the runs (at least one) for specs and the default spec retention. */
    public FleetSettings(int maxRuns, int maxGpus, int maxAgents, Duration window, int gpuWindowEntries,
                         int stepWindowEntries, Duration evaluateEvery, int anomalyHistory,
                         Duration endedRunRetention, Duration summaryInterval) {
        this(maxRuns, maxGpus, maxAgents, window, gpuWindowEntries, stepWindowEntries, evaluateEvery, anomalyHistory,
                endedRunRetention, summaryInterval, Math.max(1, maxRuns / 4), DEFAULT_SPEC_RETENTION);
    }

    /** Material changes are sent at most every 2 s by default. */
    public static final Duration DEFAULT_SUMMARY_INTERVAL = Duration.ofSeconds(2);

    /** The settings with the default {@code summaryInterval}. */
    public FleetSettings(int maxRuns, int maxGpus, int maxAgents, Duration window, int gpuWindowEntries,
                         int stepWindowEntries, Duration evaluateEvery, int anomalyHistory,
                         Duration endedRunRetention) {
        this(maxRuns, maxGpus, maxAgents, window, gpuWindowEntries, stepWindowEntries, evaluateEvery, anomalyHistory,
                endedRunRetention, DEFAULT_SUMMARY_INTERVAL);
    }

    public FleetSettings {
        if (maxRuns < 1 || maxGpus < 1 || maxAgents < 1 || gpuWindowEntries < 2 || stepWindowEntries < 2
                || anomalyHistory < 0) {
            throw new IllegalArgumentException("fleet limits must be positive");
        }
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive");
        }
        if (summaryInterval == null || summaryInterval.isNegative()) {
            throw new IllegalArgumentException("summary interval must not be negative");
        }
        if (maxSpecs < 1 || maxSpecs > maxRuns) {
            throw new IllegalArgumentException("the spec limit must be 1 to the run limit (" + maxRuns + "), got "
                    + maxSpecs);
        }
        if (specRetention == null || specRetention.isNegative() || specRetention.isZero()) {
            throw new IllegalArgumentException("spec retention must be positive");
        }
    }

    /** These settings with another {@code summaryInterval}. */
    public FleetSettings withSummaryInterval(Duration interval) {
        return new FleetSettings(maxRuns, maxGpus, maxAgents, window, gpuWindowEntries, stepWindowEntries,
                evaluateEvery, anomalyHistory, endedRunRetention, interval, maxSpecs, specRetention);
    }

    /**
     * These settings with other caps (the collector's {@code --max-runs}, {@code --max-gpus}, {@code --max-agents},
     * {@code --max-specs}).
     */
    public FleetSettings withCaps(int runs, int gpus, int agents, int specs) {
        return new FleetSettings(runs, gpus, agents, window, gpuWindowEntries, stepWindowEntries, evaluateEvery,
                anomalyHistory, endedRunRetention, summaryInterval, specs, specRetention);
    }

    /** 512 runs, 4,096 GPUs, 1,024 agents, 10-minute windows at 1-second resolution. */
    public static FleetSettings defaults() {
        return new FleetSettings(512, 4096, 1024, Duration.ofMinutes(10), 600, 512, Duration.ofSeconds(1), 20,
                Duration.ofHours(24));
    }
}
