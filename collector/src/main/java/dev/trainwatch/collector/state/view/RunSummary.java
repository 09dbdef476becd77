package dev.trainwatch.collector.state.view;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/** What the run history keeps of a run, and what {@code Fleet.restoreRun} takes back after a restart. */
public record RunSummary(String runId, RunSpec spec, double firstSeenTs, Double lastSeenTs, boolean ended,
                         Double endedAt, Long lastStep, Double lastStepTs, Double stepSeconds,
                         Double predictedStepSeconds, Long peakMemoryBytes, Long predictedPeakMemoryBytes,
                         Double gpuUtilizationRatio, Double samplesPerSecond, List<String> hosts,
                         List<String> gpuUuids, List<Anomaly> anomalies, Boolean synthetic, Double dataWaitRatio,
                         Double textEncoderRatio, Double vaeRatio) {

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
