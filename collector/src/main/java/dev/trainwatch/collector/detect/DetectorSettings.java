package dev.trainwatch.collector.detect;

import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.WaitShareWatch;
import java.time.Duration;
import java.util.Set;

/**
 * Thresholds of every detector, one nested record per detector (and per evidence class of {@code data_starvation}
 * and {@code stalled}). {@link #defaults()} are the documented defaults: docs/DETECTORS.md says what each number
 * means and why; a record here notes only what the docs do not.
 */
public record DetectorSettings(
        OomRisk oomRisk,
        MemoryAboveEstimate memoryAboveEstimate,
        DataStarvation dataStarvation,
        StepTimeAboveEstimate stepTimeAboveEstimate,
        GpuUnderutilized gpuUnderutilized,
        GpuIdle gpuIdle,
        Throttling throttling,
        Straggler straggler,
        Stalled stalled,
        XidError xidError,
        AgentLost agentLost,
        SharedGpu sharedGpu,
        HostMemory hostMemory,
        PcieBound pcieBound) {

    public static DetectorSettings defaults() {
        return new DetectorSettings(
                new OomRisk(0.03, 0.01, Duration.ofMinutes(5), Duration.ofSeconds(120), 1_000_000, 0.8,
                    Duration.ofMinutes(15), Duration.ofMinutes(3),
                    new Hysteresis(Duration.ofSeconds(10), Duration.ofMinutes(2))),
                new MemoryAboveEstimate(1.25, 1.15, 2L << 30,
                    new Hysteresis(Duration.ofSeconds(60), Duration.ofMinutes(3))),
                // the share, span and confirmation agents hurry on are these defaults (protocol's WaitShareWatch)
                new DataStarvation(Duration.ofMinutes(5), 2, Duration.ZERO,
                    new LogWait(WaitShareWatch.SHARE, 0.60, 0.20, Duration.ofSeconds((long) WaitShareWatch.SPAN_SECONDS)),
                    new RankWait(0.5),
                    new GpuConfirm(Duration.ofSeconds((long) WaitShareWatch.GPU_CONFIRM_SECONDS), Duration.ofSeconds(2),
                            0.20, 0.50, 4, 8, 1.2),
                    new IdleGaps(0.20, 0.50, 1.3, 10),
                    new Hysteresis(Duration.ofSeconds(60), Duration.ofMinutes(3))),
                new StepTimeAboveEstimate(Duration.ofMinutes(5), 1.5, 3.0, 1.3, 2,
                    new Hysteresis(Duration.ofSeconds(120), Duration.ofMinutes(3))),
                new GpuUnderutilized(Duration.ofMinutes(10), Duration.ofMinutes(5), 0.50, 0.60, 0.50, 1.5,
                    new Hysteresis(Duration.ofMinutes(2), Duration.ofMinutes(5))),
                new GpuIdle(Duration.ofMinutes(3), 0.05, new Hysteresis(Duration.ZERO, Duration.ofSeconds(60))),
                new Throttling(Duration.ofSeconds(60), GpuSample.THROTTLING_BUSY_RATIO, 0.90,
                    0.50,
                    Set.of("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                            "hw_power_brake_slowdown"),
                    GpuSample.HARDWARE_SLOWDOWNS,
                    Duration.ofSeconds(15), Duration.ofSeconds(10),
                    new Hysteresis(Duration.ofSeconds(20), Duration.ofMinutes(2))),
                new Straggler(Duration.ofSeconds(60), 3, 1.20, 0.85, 0.25, Duration.ofSeconds(20),
                    Duration.ofSeconds(15), Duration.ofSeconds(10),
                    new Hysteresis(Duration.ofSeconds(10), Duration.ofMinutes(3))),
                new Stalled(5.0, Duration.ofMinutes(2), Duration.ofSeconds(20), Duration.ofSeconds(30),
                    new Stalled.Reports(10, 3), new Stalled.Processes(0.05, 0.3, 0.2, Duration.ofSeconds(60)),
                    new Stalled.Gpus(Duration.ofSeconds(10), Duration.ofSeconds(120), 0.9, 0.05, 0.7, 0.05, 0.05, 1e6),
                    new Stalled.Phases(Duration.ofMinutes(15), Duration.ofMinutes(30), Duration.ofHours(12)),
                    new Hysteresis(Duration.ZERO, Duration.ZERO)),
                new XidError(Set.of(48L, 62L, 64L, 74L, 79L, 95L, 119L, 120L), Set.of(94L),
                    Set.of(13L, 31L, 43L), Set.of(63L, 92L), Duration.ofMinutes(30),
                    new Hysteresis(Duration.ZERO, Duration.ZERO)),
                new AgentLost(10, Duration.ofSeconds(30), Duration.ofSeconds(1),
                    new Hysteresis(Duration.ZERO, Duration.ZERO)),
                new SharedGpu(512L << 20),
                new HostMemory(Duration.ofMinutes(10), Duration.ofMinutes(6), 0.9, Duration.ofMinutes(60),
                    new Hysteresis(Duration.ofSeconds(30), Duration.ofMinutes(2))),
                new PcieBound(0.6, 0.6));
    }

    public Hysteresis hysteresis(AnomalyKind kind) {
        return switch (kind) {
            case OOM_RISK -> oomRisk.hysteresis();
            case MEMORY_ABOVE_ESTIMATE -> memoryAboveEstimate.hysteresis();
            case DATA_STARVATION -> dataStarvation.hysteresis();
            case STEP_TIME_ABOVE_ESTIMATE -> stepTimeAboveEstimate.hysteresis();
            case GPU_UNDERUTILIZED -> gpuUnderutilized.hysteresis();
            case GPU_IDLE -> gpuIdle.hysteresis();
            case THROTTLING -> throttling.hysteresis();
            case STRAGGLER -> straggler.hysteresis();
            case STALLED -> stalled.hysteresis();
            case XID_ERROR -> xidError.hysteresis();
            case AGENT_LOST -> agentLost.hysteresis();
            // Loss detectors build their persistence into the finding (reports in a row), so no sustain.
            case LOSS_NONFINITE, RUN_FAILED -> new Hysteresis(Duration.ZERO, Duration.ZERO);
            case LOSS_SPIKE -> new Hysteresis(Duration.ZERO, Duration.ofMinutes(2));
            case HOST_MEMORY -> hostMemory.hysteresis();
            case SPEC_MISMATCH -> new Hysteresis(Duration.ofMinutes(2), Duration.ofMinutes(5));
        };
    }

    public record Hysteresis(Duration sustain, Duration clearAfter) {
    }

    public record OomRisk(double headroomWarningRatio, double headroomCriticalRatio, Duration trendWindow,
                          Duration trendMinSpan, double trendMinSlopeBytesPerSecond, double trendMinR2,
                          Duration trendWarningHorizon, Duration trendCriticalHorizon, Hysteresis hysteresis) {
    }

    public record MemoryAboveEstimate(double raiseRatio, double clearRatio, long minExcessBytes,
                                      Hysteresis hysteresis) {
    }

    /**
     * @param newestSustain sustain of a finding read from the newest reports (they already span their time); the
     *                      idle-gap route keeps {@code hysteresis}' sustain
     */
    public record DataStarvation(Duration window, int minStepReports, Duration newestSustain, LogWait logWait,
                                 RankWait rankWait, GpuConfirm gpuConfirm, IdleGaps idleGaps, Hysteresis hysteresis) {
    }

    /** The log's data-wait share of step time in the newest reports ({@link StarvationLogWait}). */
    public record LogWait(double waitWarningRatio, double waitCriticalRatio, double waitClearRatio,
                          Duration newestSpan) {
    }

    /** One rank waits ({@link StarvationRankWait}) while the other ranks' median wait is under this share of its. */
    public record RankWait(double othersShareOf) {
    }

    /** The newest report alone, confirmed by the GPUs' idle gaps ({@link StarvationGpuConfirmation}). */
    public record GpuConfirm(Duration gpuConfirm, Duration gpuConfirmEvenGaps, double idleGapFraction,
                             double idleGapPollShare, int evenGapParts, int evenGapMaxParts, double evenGapPartSteps) {
    }

    /** No split in the log: repeated idle gaps while steps are slow ({@link StarvationIdleGaps}). */
    public record IdleGaps(double idleGapFraction, double idleGapPollShare, double slowStepRatio, int minPolls) {
    }

    public record StepTimeAboveEstimate(Duration window, double warningRatio, double criticalRatio,
                                        double clearRatio, int minStepReports, Hysteresis hysteresis) {
    }

    public record GpuUnderutilized(Duration window, Duration minCoverage, double utilizationRaiseRatio,
                                   double utilizationClearRatio, double memoryShareRaise, double batchGainFactor,
                                   Hysteresis hysteresis) {
    }

    public record GpuIdle(Duration idleFor, double idleRatio, Hysteresis hysteresis) {
    }

    public record Throttling(Duration window, double busyRatio, double clockRatio, double sampleShare,
                             Set<String> reasons, Set<String> criticalReasons, Duration hardwareWindow,
                             Duration hardwareSustain, Hysteresis hysteresis) {
    }

    public record Straggler(Duration window, int rankReports, double stepRatio, double clockRatio,
                            double utilizationGap, Duration rankEvidence, Duration hardwareWindow,
                            Duration hardwareSustain, Hysteresis hysteresis) {
    }

    public record Stalled(double reportGapMultiple, Duration minSilence, Duration hangGrace, Duration hangMinSilence,
                          Reports reports, Processes processes, Gpus gpus, Phases phases, Hysteresis hysteresis) {

        /** @param minGapSeconds the report gap counted is at least this ({@link StallReports}) */
        public record Reports(double minGapSeconds, double withinGaps) {
        }

        /** The ranks' processes ({@link StallProcesses}). */
        public record Processes(double asleepCpu, double spinningCpu, double busyCpu, Duration maxAge) {
        }

        /**
         * The ranks' GPUs ({@link StallGpus}).
         *
         * @param trainingPowerWindow a GPU's training power is its mean over this stretch before the last report
         */
        public record Gpus(Duration recent, Duration trainingPowerWindow, double busy, double idle, double lowPowerRatio,
                           double noTensor, double noDram, double noNvlinkBytesPerSecond) {
        }

        /** The phases the log announced ({@link StallPhase}). */
        public record Phases(Duration checkpointLimit, Duration evaluationLimit, Duration startUpLimit) {
        }
    }

    public record XidError(Set<Long> critical, Set<Long> warning, Set<Long> application, Set<Long> informational,
                           Duration clearAfter, Hysteresis hysteresis) {
    }

    public record SharedGpu(long minBytes) {
    }

    /** The steady-climb route ({@link HostMemoryClimb}); the short-term routes are the detector's constants. */
    public record HostMemory(Duration climbWindow, Duration climbMinSpan, double climbMinR2, Duration climbHorizon,
                             Hysteresis hysteresis) {
    }

    /** A slow step that is PCIe-bound ({@link PcieBoundStep}). */
    public record PcieBound(double rxLinkShare, double maxActivityRatio) {
    }

    public record AgentLost(double missedIntervals, Duration minSilence, Duration defaultInterval,
                            Hysteresis hysteresis) {
    }
}
