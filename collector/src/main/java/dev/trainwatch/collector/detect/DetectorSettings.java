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

    /** The documented defaults. */
    public static DetectorSettings defaults() {
        return new DetectorSettings(OomRisk.defaults(), MemoryAboveEstimate.defaults(), DataStarvation.defaults(),
                StepTimeAboveEstimate.defaults(), GpuUnderutilized.defaults(), GpuIdle.defaults(),
                Throttling.defaults(), Straggler.defaults(), Stalled.defaults(), XidError.defaults(),
                AgentLost.defaults(), SharedGpu.defaults(), HostMemory.defaults(), PcieBound.defaults());
    }

    /** Sustain and clear durations of one kind (used by the anomaly tracker). */
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

    /** How long a condition must hold before raising, and be absent before resolving. */
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
     * @param window              steps and utilisation looked at (the newest reports are never older)
     * @param waitWarningRatio    data-wait share of step time above this: warning
     * @param waitCriticalRatio   above this: critical
     * @param waitClearRatio      below this: clear
     * @param idleGapFraction     utilisation route: share of buffered samples at ≤5% above this …
     * @param idleGapPollShare    … in at least this share of polls (repeated gaps, not one) …
     * @param slowStepRatio       … while steps are slower than predicted by this ratio
     * @param minStepReports      step reports needed in the window; the log's wait is decided on the newest this
     *                            many reports (each above the threshold: one long wait is one report) …
     * @param newestSpan          … extended back until they cover this much step time (per-step reports: one
     *                            report is one step), whose median report must be above the threshold too
     * @param newestSustain       sustain of a finding read from the newest reports (they already span their
     *                            time); the utilisation route keeps {@code hysteresis}' sustain
     * @param gpuConfirm          the newest report alone is enough when the GPUs confirm it: idle gaps through
     *                            its steps, for at least this long since it was written (the wait goes on, it
     *                            was not one long wait), and not before its steps (the gaps are new)
     * @param gpuConfirmEvenGaps  … or for at least this long when the gaps ran all through its steps: every part of
     *                            its span (each part at least {@link #EVEN_GAP_PART_STEPS} of its steps long, at
     *                            least {@link #EVEN_GAP_PARTS} parts) had polls with gaps and polls with work, as
     *                            between the steps of a starved loop; one long wait idles whole parts instead
     */
    public record DataStarvation(Duration window, double waitWarningRatio, double waitCriticalRatio,
                                 double waitClearRatio, double idleGapFraction, double idleGapPollShare,
                                 double slowStepRatio, int minStepReports, Duration newestSpan,
                                 Duration newestSustain, Duration gpuConfirm, Duration gpuConfirmEvenGaps,
                                 Hysteresis hysteresis) {
        /** The fewest parts a report's span is cut into to say its gaps ran all through it. */
        public static final int EVEN_GAP_PARTS = 4;
        /** The most parts. */
        public static final int EVEN_GAP_MAX_PARTS = 8;
        /** A part is at least this many of the report's mean steps long (each holds a whole wait and a whole step). */
        public static final double EVEN_GAP_PART_STEPS = 1.2;

        /** The share, span and confirmation agents hurry on are these defaults (protocol's {@code WaitShareWatch}). */
        public static DataStarvation defaults() {
            return new DataStarvation(Duration.ofMinutes(5), WaitShareWatch.SHARE, 0.60, 0.20,
                    0.20, 0.50, 1.3, 2, Duration.ofSeconds((long) WaitShareWatch.SPAN_SECONDS),
                    Duration.ZERO, Duration.ofSeconds((long) WaitShareWatch.GPU_CONFIRM_SECONDS),
                    Duration.ofSeconds(2), new Hysteresis(Duration.ofSeconds(60), Duration.ofMinutes(3)));
        }
    }

    /**
     * @param window        steps looked at
     * @param warningRatio  median observed / predicted above this: warning
     * @param criticalRatio above this: critical
     * @param clearRatio    below this: clear
     * @param minStepReports step reports needed in the window
     */
    public record StepTimeAboveEstimate(Duration window, double warningRatio, double criticalRatio,
                                        double clearRatio, int minStepReports, Hysteresis hysteresis) {
        public static StepTimeAboveEstimate defaults() {
            return new StepTimeAboveEstimate(Duration.ofMinutes(5), 1.5, 3.0, 1.3, 2,
                    new Hysteresis(Duration.ofSeconds(120), Duration.ofMinutes(3)));
        }
    }

    /**
     * @param window               utilisation looked at
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
     * @param window          samples looked at
     * @param busyRatio       only samples with utilisation above this count (an idle GPU lowers clocks anyway)
     * @param clockRatio      and SM clock below this share of its maximum
     * @param sampleShare     share of busy samples throttled to raise
     * @param reasons         clock-event reasons that count as throttling
     * @param criticalReasons reasons that make it critical (hardware slowdowns)
     * @param hardwareWindow  a hardware slowdown in {@code sampleShare} of the busy samples of this newest stretch …
     * @param hardwareSustain … held this long (together: at least 10 s of slowdown) is raised without waiting for the longer window: a healthy GPU never
     *                        slows itself down in hardware for seconds on end (a software power cap during a burst is
     *                        normal, so it keeps the window and {@code hysteresis}' sustain)
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
     * @param rankEvidence    a slow rank's newest reports covering this much of its step time are sustained
     *                        evidence by themselves (raised without {@code hysteresis}' sustain); shorter reports
     *                        (one per step) keep the sustain
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
     * @param reportGapMultiple no step report for this many expected report gaps …
     * @param minSilence        … and at least this long: warning (twice that: critical)
     */
    public record Stalled(double reportGapMultiple, Duration minSilence, Hysteresis hysteresis) {
        public static Stalled defaults() {
            return new Stalled(5.0, Duration.ofMinutes(2), new Hysteresis(Duration.ZERO, Duration.ZERO));
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
