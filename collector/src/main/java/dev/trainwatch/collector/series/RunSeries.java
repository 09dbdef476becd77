package dev.trainwatch.collector.series;

import java.util.List;

/**
 * A run's recent history, the body of {@code GET /v1/runs/{id}/series}: serialise it with {@code Json.MAPPER}.
 * Times are unix seconds (the collector's clock), then base units; null = not known, omitted on the wire.
 * Immutable snapshot.
 *
 * @param runId          the run
 * @param nowTs          the collector's now when the snapshot was taken
 * @param windowSeconds  how far back the collector keeps a run's points in memory (older points are gone)
 * @param sinceTs        the {@code since} asked for, null when none
 * @param maxPoints      the most points of each series in this answer
 * @param downsampled    true when any series here had more points than {@code maxPoints} and was reduced
 * @param predicted      the estimator's figures for the run's current spec (null until a spec is registered):
 *                       constant lines to draw against the observed ones
 * @param capacityBytes  device memory of the run's smallest GPU, else the spec's GPU (the VRAM chart's ceiling)
 * @param points         the run as a whole over time: every GPU and the step reports on one time axis
 * @param steps          the step reports themselves
 * @param gpus           each GPU of the run (null when not asked for); at most {@link SeriesBuilder#MAX_GPU_TRACKS}
 * @param gpusOmitted    GPUs of the run not listed in {@code gpus} because of that cap (still in {@code points})
 */
public record RunSeries(String runId, double nowTs, double windowSeconds, Double sinceTs, int maxPoints,
                        boolean downsampled, Predicted predicted, Long capacityBytes, List<RunPoint> points,
                        List<StepPoint> steps, List<GpuTrack> gpus, Integer gpusOmitted) {

    /**
     * What the estimator predicts for the run.
     *
     * @param stepSeconds        seconds per step
     * @param peakMemoryBytes    peak device memory per GPU
     * @param samplesPerSecond   throughput over all ranks
     */
    public record Predicted(Double stepSeconds, Long peakMemoryBytes, Double samplesPerSecond) {
    }

    /**
     * The run at one time. A point that stands for several entries (downsampled) has the mean of their times, the
     * highest memory, mean utilisation, the lowest buffered utilisation and the step-weighted mean step time. A
     * GPU that sent nothing inside the point's span counts with its latest reading of the previous
     * {@link SeriesBuilder#GPU_HOLD_SECONDS}; the step figures hold the latest report likewise for a few report
     * gaps.
     *
     * @param ts                      unix seconds
     * @param memoryUsedBytes         memory in use on the run's fullest GPU
     * @param gpuUtilizationRatio     mean utilisation over the run's GPUs
     * @param gpuUtilizationMinRatio  lowest buffered utilisation sample of any of them
     * @param gpuIdleRatio            largest share of buffered samples at idle on any of them
     * @param powerWatts              power summed over the run's GPUs
     * @param gpuCount                GPUs that contributed to this point
     * @param step                    newest step number
     * @param stepSeconds             seconds per step
     * @param dataWaitRatio           share of step time waiting for data
     * @param samplesPerSecond        throughput over all ranks
     * @param loss                    mean training loss of the reports
     * @param encodingRatio           share of step time in online encoding (text encoder and VAE), when the log
     *                                reports it apart from data time (Sana)
     */
    public record RunPoint(double ts, Long memoryUsedBytes, Double gpuUtilizationRatio, Double gpuUtilizationMinRatio,
                           Double gpuIdleRatio, Double powerWatts, Integer gpuCount, Long step, Double stepSeconds,
                           Double dataWaitRatio, Double samplesPerSecond, Double loss, Double encodingRatio) {
    }

    /**
     * One step report, or the reports of one downsampled span (then: the newest step, step-weighted means).
     *
     * @param ts                unix seconds the report was stamped with (mean of the span's)
     * @param step              step number (the newest of the span)
     * @param stepSeconds       seconds per step
     * @param dataWaitRatio     share of step time waiting for data, when the log says
     * @param samplesPerSecond  throughput over all ranks
     * @param loss              training loss, when the log says
     * @param reports           reports merged into this point (1 unless downsampled)
     * @param encodingRatio     share of step time in online encoding (text encoder and VAE), when the log reports
     *                          it apart from data time (Sana)
     */
    public record StepPoint(double ts, long step, double stepSeconds, Double dataWaitRatio, Double samplesPerSecond,
                            Double loss, int reports, Double encodingRatio) {
    }

    /**
     * One GPU of the run and its own series.
     *
     * @param uuid              GPU UUID
     * @param host              node
     * @param index             NVML index on that node
     * @param name              NVML device name
     * @param memoryTotalBytes  device memory
     * @param downsampled       true when its points were reduced
     * @param points            oldest first
     */
    public record GpuTrack(String uuid, String host, int index, String name, Long memoryTotalBytes,
                           boolean downsampled, List<GpuPoint> points) {
    }

    /**
     * One GPU at one time (the collector's window entry: polls within its resolution are already merged; a
     * downsampled point merges more the same way).
     *
     * @param ts                   unix seconds
     * @param memoryUsedBytes      highest memory in use
     * @param utilizationRatio     mean utilisation
     * @param utilizationMinRatio  lowest buffered utilisation sample
     * @param idleRatio            share of buffered samples at or below 5%
     * @param smClockHz            mean SM clock
     * @param smClockMaxHz         the SM clock's maximum
     * @param powerWatts           mean power draw
     * @param temperatureCelsius   highest temperature
     */
    public record GpuPoint(double ts, Long memoryUsedBytes, Double utilizationRatio, Double utilizationMinRatio,
                           Double idleRatio, Long smClockHz, Long smClockMaxHz, Double powerWatts,
                           Double temperatureCelsius) {
    }
}
