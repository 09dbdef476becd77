package dev.trainwatch.collector.state;

import java.time.Duration;

/**
 * Sizes and limits of the collector's in-memory state. Beyond {@code maxRuns}, {@code maxGpus} or {@code maxAgents}
 * an ended or silent entry gives its slot, else the new one is refused (429 with Retry-After; a live entry is never
 * evicted, see {@link Slots}); {@code maxGpus} also bounds the rank windows of all runs. Polls closer than
 * {@code window / gpuWindowEntries} merge into one entry. {@code summaryInterval}: how often a run whose numbers moved
 * materially is sent to {@code onRunChanged} (other changes once a minute). {@code maxSpecs} spec-only runs (within
 * {@code maxRuns}) wait {@code specRetention} for their run before their slot may go to a new run.
 */
public record FleetSettings(int maxRuns, int maxGpus, int maxAgents, Duration window, int gpuWindowEntries,
                            int stepWindowEntries, Duration evaluateEvery, int anomalyHistory,
                            Duration endedRunRetention, Duration summaryInterval, int maxSpecs,
                            Duration specRetention) {

    /** Spec-only runs wait this long for their run by default (a job queued for a day still finds its spec). */
    public static final Duration DEFAULT_SPEC_RETENTION = Duration.ofHours(24);

    /** Material changes are sent at most every 2 s by default. */
    public static final Duration DEFAULT_SUMMARY_INTERVAL = Duration.ofSeconds(2);

    /** The settings with the default summary interval, a quarter of the runs (at least one) for specs. */
    public FleetSettings(int maxRuns, int maxGpus, int maxAgents, Duration window, int gpuWindowEntries,
                         int stepWindowEntries, Duration evaluateEvery, int anomalyHistory,
                         Duration endedRunRetention) {
        this(maxRuns, maxGpus, maxAgents, window, gpuWindowEntries, stepWindowEntries, evaluateEvery, anomalyHistory,
                endedRunRetention, DEFAULT_SUMMARY_INTERVAL, Math.max(1, maxRuns / 4), DEFAULT_SPEC_RETENTION);
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
