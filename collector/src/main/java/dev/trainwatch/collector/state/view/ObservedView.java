package dev.trainwatch.collector.state.view;

import java.util.List;
import java.util.Map;

/** The {@code observed} object of {@code GET /v1/runs/{id}} (fields: docs/API.md); null = not known. */
public record ObservedView(Long peakMemoryBytes, Long memoryUsedBytes, Long memoryTotalBytes, Double stepSeconds,
                           Double dataWaitRatio, Double textEncoderRatio, Double vaeRatio,
                           Double gpuUtilizationRatio, Double samplesPerSecond, Long lastStep, Double lastStepTs,
                           Integer largestBucketHeightPx, Integer largestBucketWidthPx, int gpuCount,
                           Double powerWatts, List<RankView> ranks, Double mfuRatio, Double hfuRatio,
                           Double goodputRatio, Double energyJoules, Double gpuHours, Double cost,
                           Map<String, Double> wallSeconds, Double accountedSinceTs, Double loss,
                           Boolean lossNonfinite, Long lossNonfiniteReports, String specMismatch,
                           Double smActiveRatio, Double hardwareMfuRatio) {
}
