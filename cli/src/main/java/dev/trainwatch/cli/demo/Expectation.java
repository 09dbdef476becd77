package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;

/**
 * What the estimator predicts for a scenario's spec, the baseline a scenario deviates from. Scenarios are written
 * relative to the prediction ("memory creeps from the predicted peak towards capacity") so the story they tell
 * stays the same whatever the estimator's model says.
 */
public record Expectation(long peakMemoryBytes, double stepSeconds, long gpuMemoryBytes) {

    /** The bundled estimator's prediction for {@code spec}, or {@code fallback} so the demo always starts. */
    public static Expectation of(Estimator estimator, RunSpec spec, Expectation fallback) {
        try {
            Estimate estimate = estimator.estimate(spec);
            if (estimate.peakMemoryBytes() <= 0 || estimate.gpuMemoryBytes() <= 0 || !(estimate.stepSeconds() > 0)) {
                return fallback;
            }
            return new Expectation(estimate.peakMemoryBytes(), estimate.stepSeconds(), estimate.gpuMemoryBytes());
        } catch (RuntimeException e) {
            return fallback;
        }
    }

    /** The predicted peak, bounded to a share of capacity, for scenarios that must stay on the GPU. */
    long peakWithin(double shareOfCapacity) {
        return Math.min(peakMemoryBytes, (long) (gpuMemoryBytes * shareOfCapacity));
    }
}
