package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import java.util.Map;

/** What the fleet's run says when nothing was observed: the fixtures set only what they are about. */
interface QuietRun extends RunContext {

    @Override default boolean featuresDefaulted() { return false; }
    @Override default Repricing reprice(ObservedRun observed, RunSpec target) { return null; }
    @Override default List<RankProcess> rankProcesses() { return List.of(); }
    @Override default List<HostMemorySeries> hostMemory() { return List.of(); }
    @Override default double stepsLateUntil() { return Double.NEGATIVE_INFINITY; }
    @Override default String announcedPhase() { return null; }
    @Override default double announcedPhaseTs() { return Double.NaN; }
    @Override default long oomSkips() { return 0; }
    @Override default double oomSkipTs() { return Double.NaN; }
    @Override default double samplingTs() { return Double.NaN; }
    @Override default RunFailure failure() { return null; }
    @Override default String failureHost() { return null; }
    @Override default boolean wasRaised(AnomalyKind kind) { return isActive(kind); }
    @Override default boolean wasActiveSince(AnomalyKind kind, double sinceTs) { return isActive(kind); }
    @Override default LossHealth loss() { return NO_LOSS; }
    @Override default Map<Integer, String> gpuOfRank() { return Map.of(); }

    /** No loss reported. */
    LossHealth NO_LOSS = new LossHealth() {
        @Override public int finiteCount() { return 0; }
        @Override public double finiteLoss(int i) { throw new IndexOutOfBoundsException(i); }
        @Override public long finiteStep(int i) { throw new IndexOutOfBoundsException(i); }
        @Override public int finiteBucket(int i) { throw new IndexOutOfBoundsException(i); }
        @Override public int nonFiniteLossStreak() { return 0; }
        @Override public int nonFiniteGradStreak() { return 0; }
        @Override public int finiteStreak() { return 0; }
        @Override public long nonFiniteLossReports() { return 0; }
        @Override public long firstNonFiniteStep() { return -1; }
        @Override public double firstNonFiniteTs() { return Double.NaN; }
        @Override public String nonFiniteValue() { return null; }
    };

    /** A fixture's step reports: the gap between them as the detectors read it, and no loss. */
    interface FixtureSteps extends StepSeries {
    @Override default double expectedReportGapSeconds() { return WindowStats.expectedReportGapSeconds(this); }
    @Override default double loss(int i) { return Double.NaN; }
    }

    /** A fixture's GPU: memory still scanned back from the newest entry, and no other process on it. */
    interface FixtureGpu extends GpuSeries {
    @Override default int memoryStillFrom() { return GpuSeries.memoryStillFrom(this); }
    @Override default List<OtherProcess> otherProcesses() { return List.of(); }
    }
}
