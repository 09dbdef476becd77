package dev.trainwatch.collector.state.view;

/**
 * Observed against predicted (the {@code comparison} object of {@code GET /v1/runs/{id}}). Each number is null
 * until both sides are known; the comparison starts when the spec arrives. Immutable.
 *
 * @param predictedStepSeconds        the estimator's seconds per step
 * @param stepTimeRatio               observed median / predicted step time (above 1 = slower than it should be)
 * @param predictedPeakMemoryBytes    the estimator's peak per GPU
 * @param memoryRatio                 observed peak / predicted peak
 * @param headroomBytes               capacity minus memory in use on the run's fullest GPU
 * @param capacityBytes               that GPU's memory
 * @param predictedSamplesPerSecond   the estimator's throughput over all ranks
 * @param throughputRatio             observed / predicted throughput
 * @param remainingSteps              total_steps minus the newest step
 * @param etaSeconds                  remaining steps at the observed step time
 * @param predictedMfuRatio           the MFU the prediction implies (its throughput in model FLOPs over the GPUs'
 *                                    dense peak): what this model reaches on this GPU when it runs as estimated
 * @param projectedGpuHours           GPU-hours held so far plus the remaining steps at the observed step time
 * @param projectedEnergyJoules       energy so far plus the remaining time at the run's current power draw
 * @param projectedCost               {@code projectedGpuHours} at the price per GPU-hour; null without a price
 */
public record ComparisonView(Double predictedStepSeconds, Double stepTimeRatio, Long predictedPeakMemoryBytes,
                             Double memoryRatio, Long headroomBytes, Long capacityBytes,
                             Double predictedSamplesPerSecond, Double throughputRatio, Long remainingSteps,
                             Double etaSeconds, Double predictedMfuRatio, Double projectedGpuHours,
                             Double projectedEnergyJoules, Double projectedCost) {

    /** A comparison without efficiency projections. */
    public ComparisonView(Double predictedStepSeconds, Double stepTimeRatio, Long predictedPeakMemoryBytes,
                          Double memoryRatio, Long headroomBytes, Long capacityBytes,
                          Double predictedSamplesPerSecond, Double throughputRatio, Long remainingSteps,
                          Double etaSeconds) {
        this(predictedStepSeconds, stepTimeRatio, predictedPeakMemoryBytes, memoryRatio, headroomBytes, capacityBytes,
                predictedSamplesPerSecond, throughputRatio, remainingSteps, etaSeconds, null, null, null, null);
    }
}
