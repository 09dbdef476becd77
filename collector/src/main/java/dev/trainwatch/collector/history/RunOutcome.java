package dev.trainwatch.collector.history;

import java.time.Instant;

/**
 * What a finished run showed against the estimator's raw (uncalibrated) prediction, so calibrations do not compound.
 * Memory is peak per GPU; {@code at} is when the run ended.
 */
public record RunOutcome(String runId, String gpuId, String family, double predictedStepSeconds,
                         double observedStepSeconds, Long predictedPeakBytes, Long observedPeakBytes, Instant at) {
}
