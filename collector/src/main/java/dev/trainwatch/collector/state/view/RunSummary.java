package dev.trainwatch.collector.state.view;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/**
 * What the run history keeps of a run, and what {@code Fleet.restoreRun} takes back after a restart. Plain data
 * (serialise with {@code Json.MAPPER}; it reads back with the same mapper). Immutable.
 *
 * @param runId                     run id
 * @param spec                      the spec as registered (null when none was)
 * @param firstSeenTs               unix seconds
 * @param lastSeenTs                unix seconds of the newest step report or attribution
 * @param ended                     whether the run has ended
 * @param endedAt                   unix seconds, when ended
 * @param lastStep                  newest step
 * @param lastStepTs                unix seconds of the newest step report
 * @param stepSeconds               median observed seconds per step (over the window at the time)
 * @param predictedStepSeconds      the estimator's step time
 * @param peakMemoryBytes           highest device memory on any of the run's GPUs
 * @param predictedPeakMemoryBytes  the estimator's peak
 * @param gpuUtilizationRatio       mean utilisation over the run's GPUs in the last minute
 * @param samplesPerSecond          observed throughput
 * @param hosts                     nodes
 * @param gpuUuids                  GPUs
 * @param anomalies                 active anomalies and the recently resolved ones
 * @param synthetic                 demo run
 * @param dataWaitRatio             share of the step in the log's data timer (PixArt: with the online encoders)
 * @param textEncoderRatio          share of the step in the text encoder, when the log times it (Sana)
 * @param vaeRatio                  share of the step in the VAE encoder, when the log times it (Sana)
 */
public record RunSummary(String runId, RunSpec spec, double firstSeenTs, Double lastSeenTs, boolean ended,
                         Double endedAt, Long lastStep, Double lastStepTs, Double stepSeconds,
                         Double predictedStepSeconds, Long peakMemoryBytes, Long predictedPeakMemoryBytes,
                         Double gpuUtilizationRatio, Double samplesPerSecond, List<String> hosts,
                         List<String> gpuUuids, List<Anomaly> anomalies, Boolean synthetic, Double dataWaitRatio,
                         Double textEncoderRatio, Double vaeRatio) {

    /** A summary without the step's data and encoder shares (written before they were kept). */
    public RunSummary(String runId, RunSpec spec, double firstSeenTs, Double lastSeenTs, boolean ended,
                      Double endedAt, Long lastStep, Double lastStepTs, Double stepSeconds,
                      Double predictedStepSeconds, Long peakMemoryBytes, Long predictedPeakMemoryBytes,
                      Double gpuUtilizationRatio, Double samplesPerSecond, List<String> hosts,
                      List<String> gpuUuids, List<Anomaly> anomalies, Boolean synthetic) {
        this(runId, spec, firstSeenTs, lastSeenTs, ended, endedAt, lastStep, lastStepTs, stepSeconds,
                predictedStepSeconds, peakMemoryBytes, predictedPeakMemoryBytes, gpuUtilizationRatio, samplesPerSecond,
                hosts, gpuUuids, anomalies, synthetic, null, null, null);
    }

    /** The same summary with other anomalies. */
    public RunSummary withAnomalies(List<Anomaly> newAnomalies) {
        return new RunSummary(runId, spec, firstSeenTs, lastSeenTs, ended, endedAt, lastStep, lastStepTs, stepSeconds,
                predictedStepSeconds, peakMemoryBytes, predictedPeakMemoryBytes, gpuUtilizationRatio, samplesPerSecond,
                hosts, gpuUuids, newAnomalies, synthetic, dataWaitRatio, textEncoderRatio, vaeRatio);
    }

    /** The same summary with another spec. */
    public RunSummary withSpec(RunSpec newSpec) {
        return new RunSummary(runId, newSpec, firstSeenTs, lastSeenTs, ended, endedAt, lastStep, lastStepTs,
                stepSeconds, predictedStepSeconds, peakMemoryBytes, predictedPeakMemoryBytes, gpuUtilizationRatio,
                samplesPerSecond, hosts, gpuUuids, anomalies, synthetic, dataWaitRatio, textEncoderRatio, vaeRatio);
    }

    /** The same summary, ended at {@code at} (unix seconds). */
    public RunSummary asEndedAt(double at) {
        return new RunSummary(runId, spec, firstSeenTs, lastSeenTs, true, at, lastStep, lastStepTs, stepSeconds,
                predictedStepSeconds, peakMemoryBytes, predictedPeakMemoryBytes, gpuUtilizationRatio, samplesPerSecond,
                hosts, gpuUuids, anomalies, synthetic, dataWaitRatio, textEncoderRatio, vaeRatio);
    }
}
