package dev.trainwatch.collector.history;

import java.util.List;

/**
 * Calibration of one (GPU id, model family) group: what the estimator's step time and peak memory are multiplied by,
 * and the runs that say so.
 *
 * @param gpuId          catalog GPU id
 * @param family         model family
 * @param stepTimeFactor observed / predicted step time applied to predictions (1 until there is enough evidence)
 * @param memoryFactor   observed / predicted peak memory applied to predictions (1 until there is enough evidence)
 * @param runs           finished runs of the group recorded (used, outliers, excluded and from before a reset)
 * @param usedRuns       the runs whose step-time ratio made {@code stepTimeFactor}, newest first
 * @param outlierRuns    runs left out because their ratio was far from the others' (a mis-specified run)
 * @param excludedRuns   runs a user excluded
 * @param applied        whether the factors are in force: false while fewer than {@link Calibrator#MIN_RUNS}
 *                       runs agree
 */
public record CalibrationFactors(String gpuId, String family, double stepTimeFactor, double memoryFactor, int runs,
                                 List<String> usedRuns, List<String> outlierRuns, List<String> excludedRuns,
                                 boolean applied) {

    /** Factors from runs counted only (tests, older callers). */
    public CalibrationFactors(String gpuId, String family, double stepTimeFactor, double memoryFactor, int runs) {
        this(gpuId, family, stepTimeFactor, memoryFactor, runs, List.of(), List.of(), List.of(), true);
    }
}
