package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.StepSeries;
import java.util.List;

/**
 * A copy of what a series build of one run reads, taken under the fleet's lock ({@link Fleet#seriesSource}): the
 * run's GPU windows and step reports, and its prediction. The build reads only this copy.
 *
 * @param gpuFromTs              the first time the run's GPU entries count (the run's first sighting)
 * @param gpuToTs                the run's end, infinite while it runs
 * @param capacityBytes          the run's GPU memory (the smallest of its GPUs, else the prediction's)
 * @param samplesPerStepFallback samples per step by the spec, when the reports do not say
 */
public record SeriesSource(String runId, double nowTs, double windowSeconds, double gpuFromTs, double gpuToTs,
                           StepSeries steps, List<? extends GpuSeries> gpus, Predicted predicted, Long capacityBytes,
                           double samplesPerStepFallback) {

    /** What the estimate predicts, each absent when it does not. */
    public record Predicted(Double stepSeconds, Long peakMemoryBytes, Double samplesPerSecond) {
    }
}
