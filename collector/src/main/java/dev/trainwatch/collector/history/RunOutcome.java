package dev.trainwatch.collector.history;

import java.time.Instant;

/**
 * What a finished run showed against what was predicted for it, for calibration. Predictions are the
 * estimator's raw (uncalibrated) figures, so calibrations do not compound.
 *
 * @param runId                  run id
 * @param gpuId                  catalog GPU id
 * @param family                 model family ({@code dit}, {@code pixart}, {@code sana}, {@code opensora})
 * @param predictedStepSeconds   raw predicted seconds per step
 * @param observedStepSeconds    observed median seconds per step
 * @param predictedPeakBytes     raw predicted peak memory per GPU
 * @param observedPeakBytes      observed peak memory per GPU (null when unknown)
 * @param at                     when the run ended
 */
public record RunOutcome(String runId, String gpuId, String family, double predictedStepSeconds,
                         double observedStepSeconds, Long predictedPeakBytes, Long observedPeakBytes, Instant at) {
}
