package dev.trainwatch.collector.detect;

import java.util.List;

/** The detector set, in evaluation order. */
public final class Detectors {

    private Detectors() {
    }

    /**
     * One detector per anomaly kind, configured from {@code settings}. Order matters only where one defers to
     * another: {@code gpu_idle} and {@code data_starvation} are evaluated before {@code gpu_underutilized}.
     */
    public static List<Detector> all(DetectorSettings settings) {
        return List.of(
                new OomRiskDetector(settings),
                new MemoryAboveEstimateDetector(settings),
                new DataStarvationDetector(settings),
                new StepTimeAboveEstimateDetector(settings),
                new GpuIdleDetector(settings),
                new GpuUnderutilizedDetector(settings),
                new ThrottlingDetector(settings),
                new StragglerDetector(settings),
                new StalledDetector(settings),
                new XidErrorDetector(settings),
                new AgentLostDetector(settings),
                new LossNonFiniteDetector(),
                new LossSpikeDetector(),
                new RunFailedDetector(),
                new HostMemoryDetector(settings),
                new SpecMismatchDetector());
    }
}
