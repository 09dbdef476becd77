package dev.trainwatch.collector.state.view;

/** Observed against predicted ({@code comparison} in {@code GET /v1/runs/{id}}; docs/API.md); null until both known. */
public record ComparisonView(Double predictedStepSeconds, Double stepTimeRatio, Long predictedPeakMemoryBytes,
                             Double memoryRatio, Long headroomBytes, Long capacityBytes,
                             Double predictedSamplesPerSecond, Double throughputRatio, Long remainingSteps,
                             Double etaSeconds, Double predictedMfuRatio, Double projectedGpuHours,
                             Double projectedEnergyJoules, Double projectedCost) {
}
