package dev.trainwatch.collector.series;

import java.util.List;

/**
 * A run's recent history, the body of {@code GET /v1/runs/{id}/series} (each field is described in docs/API.md).
 * Times are unix seconds on the collector's clock, other figures base units; null = not known, omitted on the wire.
 * Immutable snapshot.
 */
public record RunSeries(String runId, double nowTs, double windowSeconds, Double sinceTs, int maxPoints,
                        boolean downsampled, Predicted predicted, Long capacityBytes, List<RunPoint> points,
                        List<StepPoint> steps, List<GpuTrack> gpus, Integer gpusOmitted) {

    /** What the estimator predicts for the run's current spec: constant lines to draw against the observed ones. */
    public record Predicted(Double stepSeconds, Long peakMemoryBytes, Double samplesPerSecond) {
    }

    /**
     * The run at one time, over all its GPUs and step reports. A downsampled point has the mean of its entries'
     * times, the highest memory, mean utilisation, the lowest buffered utilisation and the step-weighted mean step
     * time; a GPU silent in the point's span counts with its reading of the previous
     * {@link SeriesBuilder#GPU_HOLD_SECONDS}.
     */
    public record RunPoint(double ts, Long memoryUsedBytes, Double gpuUtilizationRatio, Double gpuUtilizationMinRatio,
                           Double gpuIdleRatio, Double powerWatts, Integer gpuCount, Long step, Double stepSeconds,
                           Double dataWaitRatio, Double samplesPerSecond, Double loss, Double encodingRatio) {
    }

    /** One step report, or the reports of one downsampled span (then: the newest step, step-weighted means). */
    public record StepPoint(double ts, long step, double stepSeconds, Double dataWaitRatio, Double samplesPerSecond,
                            Double loss, int reports, Double encodingRatio) {
    }

    /** One GPU of the run and its own series, oldest first. */
    public record GpuTrack(String uuid, String host, int index, String name, Long memoryTotalBytes,
                           boolean downsampled, List<GpuPoint> points) {
    }

    /** One GPU at one time: the collector's window entry, or several merged the same way when downsampled. */
    public record GpuPoint(double ts, Long memoryUsedBytes, Double utilizationRatio, Double utilizationMinRatio,
                           Double idleRatio, Long smClockHz, Long smClockMaxHz, Double powerWatts,
                           Double temperatureCelsius) {
    }
}
