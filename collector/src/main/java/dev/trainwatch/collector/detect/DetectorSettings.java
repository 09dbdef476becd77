package dev.trainwatch.collector.detect;

import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.WaitShareWatch;
import java.time.Duration;
import java.util.Set;

/**
 * Thresholds of every detector, grouped per detector. Immutable; {@link #defaults()} gives the documented
 * defaults (docs/DETECTORS.md explains each number). {@code sustain} is how long a condition must hold before the
 * anomaly is raised; {@code clearAfter} how long it must be absent before it is resolved (hysteresis against
 * flapping). Detectors with two thresholds also raise at one number and clear at a lower one.
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
        return new DetectorSettings(OomRisk.defaults(), MemoryAboveEstimate.defaults(), DataStarvation.defaults(),
                StepTimeAboveEstimate.defaults(), GpuUnderutilized.defaults(), GpuIdle.defaults(),
                Throttling.defaults(), Straggler.defaults(), Stalled.defaults(), XidError.defaults(),
                AgentLost.defaults(), SharedGpu.defaults(), HostMemory.defaults(), PcieBound.defaults());
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
            // Loss detectors build their persistence into the finding (reports in a row), so no sustain; a
            // spike clears two minutes after it subsides. A failed run is raised once, on the failure.
            case LOSS_NONFINITE, RUN_FAILED -> new Hysteresis(Duration.ZERO, Duration.ZERO);
            case LOSS_SPIKE -> new Hysteresis(Duration.ZERO, Duration.ofMinutes(2));
            case HOST_MEMORY -> hostMemory.hysteresis();
            // Two five-minute comparisons that disagree: the spec is wrong, not a passing phase.
            case SPEC_MISMATCH -> new Hysteresis(Duration.ofMinutes(2), Duration.ofMinutes(5));
        };
    }

    public record Hysteresis(Duration sustain, Duration clearAfter) {
    }

    /**
     * @param headroomWarningRatio  free memory below this share of capacity on the run's fullest GPU: warning
     * @param headroomCriticalRatio free memory below this share: critical
     * @param trendWindow           how far back the memory trend regression looks
     * @param trendMinSpan          the regression needs at least this much data
     * @param trendMinSlopeBytesPerSecond growth slower than this is allocator noise, not a leak
     * @param trendMinR2            the fit must explain this share of the variance (a steady ramp, not noise)
     * @param trendWarningHorizon   projected to reach capacity within this: warning
     * @param trendCriticalHorizon  projected to reach capacity within this: critical
     */
    public record OomRisk(double headroomWarningRatio, double headroomCriticalRatio, Duration trendWindow,
                          Duration trendMinSpan, double trendMinSlopeBytesPerSecond, double trendMinR2,
                          Duration trendWarningHorizon, Duration trendCriticalHorizon, Hysteresis hysteresis) {
        public static OomRisk defaults() {
            return new OomRisk(0.03, 0.01, Duration.ofMinutes(5), Duration.ofSeconds(120), 1_000_000, 0.8,
                    Duration.ofMinutes(15), Duration.ofMinutes(3),
                    new Hysteresis(Duration.ofSeconds(10), Duration.ofMinutes(2)));
        }
    }

    /**
     * @param raiseRatio   observed peak above predicted × this: raise
     * @param clearRatio   below predicted × this: clear
     * @param minExcessBytes the excess must also be at least this many bytes (small models, small numbers)
     */
    public record MemoryAboveEstimate(double raiseRatio, double clearRatio, long minExcessBytes,
                                      Hysteresis hysteresis) {
        public static MemoryAboveEstimate defaults() {
            return new MemoryAboveEstimate(1.25, 1.15, 2L << 30,
                    new Hysteresis(Duration.ofSeconds(60), Duration.ofMinutes(3)));
        }
    }

    /**
     * {@code data_starvation}: a decision over four kinds of evidence, each with its own settings.
     *
     * @param window         steps and utilisation looked at (the newest reports are never older)
     * @param minStepReports step reports needed in the window; the log's wait is decided on the newest this many
     * @param newestSustain  sustain of a finding read from the newest reports (they already span their time); the
     *                       idle-gap route keeps {@code hysteresis}' sustain
     */
    public record DataStarvation(Duration window, int minStepReports, Duration newestSustain, LogWait logWait,
                                 RankWait rankWait, GpuConfirm gpuConfirm, IdleGaps idleGaps, Hysteresis hysteresis) {
        /** The share, span and confirmation agents hurry on are these defaults (protocol's {@code WaitShareWatch}). */
        public static DataStarvation defaults() {
            return new DataStarvation(Duration.ofMinutes(5), 2, Duration.ZERO,
                    new LogWait(WaitShareWatch.SHARE, 0.60, 0.20, Duration.ofSeconds((long) WaitShareWatch.SPAN_SECONDS)),
                    new RankWait(0.5),
                    new GpuConfirm(Duration.ofSeconds((long) WaitShareWatch.GPU_CONFIRM_SECONDS), Duration.ofSeconds(2),
                            0.20, 0.50, 4, 8, 1.2),
                    new IdleGaps(0.20, 0.50, 1.3, 10),
                    new Hysteresis(Duration.ofSeconds(60), Duration.ofMinutes(3)));
        }
    }

    /**
     * The log's data-wait share of step time in the newest reports ({@link StarvationLogWait}).
     *
     * @param waitWarningRatio  each of the newest reports and their median report above this: warning
     * @param waitCriticalRatio above this: critical
     * @param waitClearRatio    once raised, held while the newest reports' share is above this
     * @param newestSpan        the newest reports are extended back until they cover this much step time
     */
    public record LogWait(double waitWarningRatio, double waitCriticalRatio, double waitClearRatio,
                          Duration newestSpan) {
    }

    /** One rank waits ({@link StarvationRankWait}) while the other ranks' median wait is under this share of its. */
    public record RankWait(double othersShareOf) {
    }

    /**
     * The newest report alone, confirmed by the GPUs' idle gaps ({@link StarvationGpuConfirmation}).
     *
     * @param gpuConfirm         gaps through the report's steps and for this long since it was written
     * @param gpuConfirmEvenGaps … or this long when the gaps ran all through its steps: cut into parts (at least
     *                           {@code evenGapParts}, at most {@code evenGapMaxParts}, each at least {@code
     *                           evenGapPartSteps} of its mean steps), every part had a poll with a gap and one with work
     * @param idleGapFraction    a poll with this share of its buffered samples at ≤5% has a gap …
     * @param idleGapPollShare   … and this share of polls must have one
     */
    public record GpuConfirm(Duration gpuConfirm, Duration gpuConfirmEvenGaps, double idleGapFraction,
                             double idleGapPollShare, int evenGapParts, int evenGapMaxParts, double evenGapPartSteps) {
    }

    /**
     * No split in the log: repeated idle gaps while steps are slow ({@link StarvationIdleGaps}).
     *
     * @param idleGapFraction  share of a poll's buffered samples at ≤5% that makes a gap …
     * @param idleGapPollShare … in at least this share of polls …
     * @param slowStepRatio    … while steps are slower than predicted (or than the run's own earlier pace) by this
     * @param minPolls         polls needed
     */
    public record IdleGaps(double idleGapFraction, double idleGapPollShare, double slowStepRatio, int minPolls) {
    }

    /**
     * @param warningRatio  median observed / predicted above this: warning
     * @param criticalRatio above this: critical
     * @param clearRatio    below this: clear
     */
    public record StepTimeAboveEstimate(Duration window, double warningRatio, double criticalRatio,
                                        double clearRatio, int minStepReports, Hysteresis hysteresis) {
        public static StepTimeAboveEstimate defaults() {
            return new StepTimeAboveEstimate(Duration.ofMinutes(5), 1.5, 3.0, 1.3, 2,
                    new Hysteresis(Duration.ofSeconds(120), Duration.ofMinutes(3)));
        }
    }

    /**
     * @param minCoverage          the window must hold at least this much data
     * @param utilizationRaiseRatio mean utilisation below this: raise
     * @param utilizationClearRatio above this: clear
     * @param memoryShareRaise     memory used below this share of capacity (and the estimator says a larger
     *                             batch fits) …
     * @param batchGainFactor      … with max_batch at least this × the current batch
     */
    public record GpuUnderutilized(Duration window, Duration minCoverage, double utilizationRaiseRatio,
                                   double utilizationClearRatio, double memoryShareRaise, double batchGainFactor,
                                   Hysteresis hysteresis) {
        public static GpuUnderutilized defaults() {
            return new GpuUnderutilized(Duration.ofMinutes(10), Duration.ofMinutes(5), 0.50, 0.60, 0.50, 1.5,
                    new Hysteresis(Duration.ofMinutes(2), Duration.ofMinutes(5)));
        }
    }

    /**
     * @param idleFor          a GPU's utilisation at or below {@code idleRatio} for this long
     * @param idleRatio        "near 0%"
     * @param busyRatio        a sample above this ends idleness at once
     */
    public record GpuIdle(Duration idleFor, double idleRatio, double busyRatio, Hysteresis hysteresis) {
        public static GpuIdle defaults() {
            return new GpuIdle(Duration.ofMinutes(3), 0.05, 0.20,
                    new Hysteresis(Duration.ZERO, Duration.ofSeconds(60)));
        }
    }

    /**
     * @param busyRatio       only samples with utilisation above this count (an idle GPU lowers clocks anyway)
     * @param clockRatio      and SM clock below this share of its maximum
     * @param sampleShare     share of busy samples throttled to raise
     * @param reasons         clock-event reasons that count as throttling
     * @param criticalReasons reasons that make it critical (hardware slowdowns)
     * @param hardwareWindow  a hardware slowdown in {@code sampleShare} of the busy samples of this newest stretch …
     * @param hardwareSustain … held this long is raised without waiting for the longer window (a software power cap
     *                        during a burst is normal, so it keeps the window and {@code hysteresis}' sustain)
     */
    public record Throttling(Duration window, double busyRatio, double clockRatio, double sampleShare,
                             Set<String> reasons, Set<String> criticalReasons, Duration hardwareWindow,
                             Duration hardwareSustain, Hysteresis hysteresis) {
        public static Throttling defaults() {
            return new Throttling(Duration.ofSeconds(60), GpuSample.THROTTLING_BUSY_RATIO, 0.90,
                    0.50,
                    Set.of("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                            "hw_power_brake_slowdown"),
                    GpuSample.HARDWARE_SLOWDOWNS,
                    Duration.ofSeconds(15), Duration.ofSeconds(10),
                    new Hysteresis(Duration.ofSeconds(20), Duration.ofMinutes(2)));
        }
    }

    /**
     * @param window          GPU samples looked at, and the oldest step report a rank's recent mean may use
     * @param rankReports     a rank's recent mean step time is over its newest this many reports
     * @param stepRatio       one rank's mean step time above the others' median × this
     * @param clockRatio      one busy GPU's mean SM clock below the others' median × this
     * @param utilizationGap  one GPU's mean utilisation this far below the others' median (others busy)
     * @param rankEvidence    a slow rank's newest reports covering this much of its step time are raised without
     *                        {@code hysteresis}' sustain
     * @param hardwareWindow  a GPU slowed down in hardware in half its busy samples of this newest stretch (as
     *                        {@code throttling} reads it), its median clock there below the others' × {@code
     *                        clockRatio} …
     * @param hardwareSustain … for this long is raised without waiting for the window's median
     */
    public record Straggler(Duration window, int rankReports, double stepRatio, double clockRatio,
                            double utilizationGap, Duration rankEvidence, Duration hardwareWindow,
                            Duration hardwareSustain, Hysteresis hysteresis) {
        public static Straggler defaults() {
            return new Straggler(Duration.ofSeconds(60), 3, 1.20, 0.85, 0.25, Duration.ofSeconds(20),
                    Duration.ofSeconds(15), Duration.ofSeconds(10),
                    new Hysteresis(Duration.ofSeconds(10), Duration.ofMinutes(3)));
        }
    }

    /**
     * {@code stalled}: a decision over four kinds of evidence, each with its own settings.
     *
     * @param reportGapMultiple no step report for this many expected report gaps …
     * @param minSilence        … and at least this long: warning (twice that: critical); before the first step, the
     *                          silence after the last phase line that says the phases ended
     * @param hangGrace         once a rank is named, the hang is called this long after the next report was due …
     * @param hangMinSilence    … and never sooner after the last report (a rank's CPU use is read over 30 s)
     */
    public record Stalled(double reportGapMultiple, Duration minSilence, Duration hangGrace, Duration hangMinSilence,
                          Reports reports, Processes processes, Gpus gpus, Phases phases, Hysteresis hysteresis) {
        public static Stalled defaults() {
            return new Stalled(5.0, Duration.ofMinutes(2), Duration.ofSeconds(20), Duration.ofSeconds(30),
                    new Reports(10, 3), new Processes(0.05, 0.3, 0.2, Duration.ofSeconds(60)),
                    new Gpus(Duration.ofSeconds(10), Duration.ofSeconds(120), 0.9, 0.05, 0.7, 0.05, 0.05, 1e6),
                    new Phases(Duration.ofMinutes(15), Duration.ofMinutes(30), Duration.ofHours(12)),
                    new Hysteresis(Duration.ZERO, Duration.ZERO));
        }

        /**
         * A rank's own reports stopped before the others' ({@link StallReports}).
         *
         * @param minGapSeconds the report gap counted is at least this
         * @param withinGaps    its last report at least one gap and at most this many gaps before the others' last
         */
        public record Reports(double minGapSeconds, double withinGaps) {
        }

        /**
         * The ranks' processes ({@link StallProcesses}).
         *
         * @param asleepCpu   a process using less than this share of a core is not working
         * @param spinningCpu a spinning collective keeps its process on the CPU at least this much
         * @param busyCpu     a rank whose GPU is idle but whose process uses this much works on the CPU (not hung)
         * @param maxAge      older readings say nothing about now
         */
        public record Processes(double asleepCpu, double spinningCpu, double busyCpu, Duration maxAge) {
        }

        /**
         * The ranks' GPUs ({@link StallGpus}).
         *
         * @param recent                 what a GPU does now is read over this newest stretch
         * @param trainingPowerWindow    its training power over this stretch before the last report
         * @param busy                   utilisation at or above this is busy …
         * @param idle                   … below this idle
         * @param lowPowerRatio          busy under this share of its training power: spinning (without counters)
         * @param noTensor               tensor pipes busy less than this share of the time: not computing
         * @param noDram                 DRAM bandwidth under this share: not moving data either
         * @param noNvlinkBytesPerSecond NVLink traffic under this: no collective is moving data
         */
        public record Gpus(Duration recent, Duration trainingPowerWindow, double busy, double idle, double lowPowerRatio,
                           double noTensor, double noDram, double noNvlinkBytesPerSecond) {
        }

        /**
         * The phases the log announced ({@link StallPhase}).
         *
         * @param checkpointLimit a checkpoint save is not a hang for this long
         * @param evaluationLimit an evaluation (sampling, validation) for this long
         * @param startUpLimit    a start-up phase (caching, quantizing) for this long while the run works
         */
        public record Phases(Duration checkpointLimit, Duration evaluationLimit, Duration startUpLimit) {
        }
    }

    /**
     * @param critical      XIDs that mean hardware or driver trouble: page
     * @param warning       XIDs worth a look
     * @param application   XIDs caused by the program (illegal address, MMU fault): warning, never page
     * @param informational XIDs that are not raised at all
     * @param clearAfter    an XID anomaly stays active this long after the newest XID
     */
    public record XidError(Set<Long> critical, Set<Long> warning, Set<Long> application, Set<Long> informational,
                           Duration clearAfter, Hysteresis hysteresis) {
        public static XidError defaults() {
            return new XidError(Set.of(48L, 62L, 64L, 74L, 79L, 95L, 119L, 120L), Set.of(94L),
                    Set.of(13L, 31L, 43L), Set.of(63L, 92L), Duration.ofMinutes(30),
                    new Hysteresis(Duration.ZERO, Duration.ZERO));
        }
    }

    /**
     * @param minBytes a process on the run's GPU that is not the run's is named when it holds at least this (a display
     *                 server or a monitoring tool's CUDA context holds a few hundred MiB and is not worth a word)
     */
    public record SharedGpu(long minBytes) {
        public static SharedGpu defaults() {
            return new SharedGpu(512L << 20);
        }
    }

    /**
     * A steady climb toward the node's limit, told before the OOM killer ends the run (the short-term routes are the
     * detector's constants).
     *
     * @param climbWindow  how far back the climb's fit looks
     * @param climbMinSpan the fit needs at least this much data
     * @param climbMinR2   the fit must explain this share of the variance (a steady climb, not churn)
     * @param climbHorizon projected exhaustion within this: warning
     */
    public record HostMemory(Duration climbWindow, Duration climbMinSpan, double climbMinR2, Duration climbHorizon,
                             Hysteresis hysteresis) {
        public static HostMemory defaults() {
            return new HostMemory(Duration.ofMinutes(10), Duration.ofMinutes(6), 0.9, Duration.ofMinutes(60),
                    new Hysteresis(Duration.ofSeconds(30), Duration.ofMinutes(2)));
        }
    }

    /**
     * A slow step is PCIe-bound when, over the step window, host-to-device traffic runs near the link's rate while
     * the GPU computes little.
     *
     * @param rxLinkShare      PCIe rx above this share of the link's per-direction rate (the GPU's catalog entry) …
     * @param maxActivityRatio … while SM activity (GPM; else NVML utilisation) stays below this
     */
    public record PcieBound(double rxLinkShare, double maxActivityRatio) {
        public static PcieBound defaults() {
            return new PcieBound(0.6, 0.6);
        }
    }

    /**
     * @param missedIntervals   no batch for this many of the agent's polling intervals …
     * @param minSilence        … and at least this long
     * @param defaultInterval   interval assumed when the agent does not report its own
     */
    public record AgentLost(double missedIntervals, Duration minSilence, Duration defaultInterval,
                            Hysteresis hysteresis) {
        public static AgentLost defaults() {
            return new AgentLost(10, Duration.ofSeconds(30), Duration.ofSeconds(1),
                    new Hysteresis(Duration.ZERO, Duration.ZERO));
        }
    }
}
