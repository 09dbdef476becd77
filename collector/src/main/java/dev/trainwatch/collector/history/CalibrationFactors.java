package dev.trainwatch.collector.history;

import java.util.List;

/**
 * Calibration of one (GPU id, model family) group: what the estimator's step time and peak memory are multiplied by
 * (1 until there is enough evidence), and the runs that say so; {@code runs} counts every recorded run of the group.
 */
public record CalibrationFactors(String gpuId, String family, double stepTimeFactor, double memoryFactor, int runs,
                                 List<String> usedRuns, List<String> outlierRuns, List<String> excludedRuns,
                                 boolean applied) {
}
