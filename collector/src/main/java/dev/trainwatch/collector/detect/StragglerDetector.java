package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.Stats.nz;
import static dev.trainwatch.collector.detect.WindowStats.mean;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.protocol.GpuSample;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code straggler}: one rank holds the others back. From the log when ranks report their own step times
 * (slowest rank's mean above the others' median), else from the GPUs: one busy GPU's SM clock well below the
 * others', or one GPU's utilisation far below the others' while they are busy.
 */
public final class StragglerDetector extends BaseDetector {

    private final DetectorSettings.Straggler s;
    /** The clock-event reasons that throttle and those that are hardware slowdowns, as {@code throttling} reads them. */
    private final int throttleMask;
    private final int hardwareMask;

    public StragglerDetector(DetectorSettings settings) {
        super(AnomalyKind.STRAGGLER);
        this.s = settings.straggler();
        this.throttleMask = GpuSeries.reasonMask(settings.throttling().reasons());
        this.hardwareMask = GpuSeries.reasonMask(settings.throttling().criticalReasons());
    }

    /** How far back a rank's newest reports may reach. */
    static final double RANK_REPORT_MAX_AGE_SECONDS = 300;

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        double from = run.now() - seconds(s.window());
        Optional<Finding> byRank = byRank(run, from, active);
        return byRank.isPresent() ? byRank : byGpu(run, from, active);
    }

    /**
     * Each rank's median step time over its newest {@code rankReports} reports (at most 5 minutes old): one slow
     * report is not a straggler, two in a row are.
     */
    private Map<Integer, Double> recentStepSecondsByRank(RunContext run, Map<Integer, Double> coveredSeconds) {
        RankSeries ranks = run.ranks();
        double oldest = run.now() - RANK_REPORT_MAX_AGE_SECONDS;
        Map<Integer, Double> out = new LinkedHashMap<>();
        for (int k = 0; k < ranks.count(); k++) {
            StepSeries steps = ranks.steps(k);
            int first = Math.max(steps.firstIndexAtOrAfter(oldest), steps.size() - s.rankReports());
            int n = steps.size() - first;
            if (n < s.rankReports()) {
                continue;
            }
            double[] v = new double[n];
            double covered = 0;
            for (int i = 0; i < n; i++) {
                v[i] = steps.timeS(first + i);
                covered += steps.timeS(first + i) * steps.intervalSteps(first + i);
            }
            out.put(ranks.rank(k), Stats.median(v));
            coveredSeconds.put(ranks.rank(k), covered);
        }
        return out;
    }

    private Optional<Finding> byRank(RunContext run, double from, boolean active) {
        Map<Integer, Double> covered = new LinkedHashMap<>();
        Map<Integer, Double> means = recentStepSecondsByRank(run, covered);
        if (means.size() < 2) {
            return Optional.empty();
        }
        int slowest = -1;
        double slowestMean = 0;
        for (Map.Entry<Integer, Double> e : means.entrySet()) {
            double mean = e.getValue();
            if (mean > slowestMean) {
                slowestMean = mean;
                slowest = e.getKey();
            }
        }
        int finalSlowest = slowest;
        double[] others = means.entrySet().stream().filter(e -> e.getKey() != finalSlowest)
                .mapToDouble(Map.Entry::getValue).toArray();
        double median = Stats.median(others);
        double ratio = slowestMean / median;
        double needed = active ? 1 + (s.stepRatio() - 1) / 2 : s.stepRatio();
        if (!(ratio > needed)) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("rank", slowest);
        evidence.put("rank_step_seconds", Texts.round(slowestMean, 3));
        evidence.put("others_median_step_seconds", Texts.round(median, 3));
        evidence.put("ratio", Texts.round(ratio, 2));
        evidence.put("ranks", means.size());
        Cause cause = rankCause(run, slowest, from);
        cause.addTo(evidence);
        String message = String.format(Locale.ROOT, "rank %d takes %s per step where the other %d ranks take %s "
                + "(%s); %s", slowest, Texts.secs(slowestMean), others.length, Texts.secs(median),
                Texts.times(ratio), cause.text());
        Finding finding = new Finding(Severity.WARNING, message, evidence,
                cause.fix("rank " + slowest) + "; every rank waits for it at each all-reduce");
        // Reports that each cover many steps already are the sustained evidence: two slow ones of the newest three
        // span tens of seconds. Reports of one step each keep the usual sustain.
        return Optional.of(covered.getOrDefault(slowest, 0.0) >= s.rankEvidence().toSeconds()
                ? finding.withSustain(Duration.ZERO) : finding);
    }

    /** Why a rank is slow: in its input, its GPU's compute (clocks, throttling), or waiting with its GPU less busy. */
    private record Cause(String slowIn, String text, Map<String, Object> details) {

        void addTo(Map<String, Object> evidence) {
            evidence.put("slow_in", slowIn);
            evidence.putAll(details);
        }

        String fix(String who) {
            return switch (slowIn) {
                case "input" -> "give " + who + "'s data loader more workers or faster storage, or precompute "
                        + "features; check that its data shard is not larger or on a slower disk";
                case "compute" -> "check " + who + "'s GPU: cooling and power (see throttling), or a slower or "
                        + "shared GPU; move the job off it if it stays slow";
                case "waiting" -> "its GPU is idle more than the others': look at " + who + "'s host (CPU cores "
                        + "shared with other jobs, swap, a slow network link) and at work only that rank does";
                default -> "look at " + who + "'s GPU and node: throttling, a slower or shared GPU, its data loader "
                        + "workers or disk";
            };
        }
    }

    private Cause rankCause(RunContext run, int rank, double from) {
        RankSeries ranks = run.ranks();
        double oldest = run.now() - RANK_REPORT_MAX_AGE_SECONDS;
        double[] waits = new double[ranks.count()];
        double rankWait = Double.NaN;
        int n = 0;
        for (int k = 0; k < ranks.count(); k++) {
            StepSeries steps = ranks.steps(k);
            double w = WindowStats.stepShare(steps, oldest, WindowStats.StepPart.DATA)
                    + nz(WindowStats.stepShare(steps, oldest, WindowStats.StepPart.TEXT_ENCODER))
                    + nz(WindowStats.stepShare(steps, oldest, WindowStats.StepPart.VAE));
            if (ranks.rank(k) == rank) {
                rankWait = w;
            } else if (!Double.isNaN(w)) {
                waits[n++] = w;
            }
        }
        double othersWait = Stats.median(Arrays.copyOf(waits, n));
        if (!Double.isNaN(rankWait) && !(rankWait <= nz(othersWait) + 0.10)) {
            return new Cause("input", String.format(Locale.ROOT, "slow in its input: it waits %s of each step "
                    + "for data where the others wait %s", Texts.pct(rankWait), Texts.pct(nz(othersWait))),
                    Map.of("rank_data_wait_ratio", Texts.round(rankWait, 3),
                            "others_median_data_wait_ratio", Texts.round(nz(othersWait), 3)));
        }
        String uuid = run.gpuOfRank().get(rank);
        List<GpuSeries> gpus = fresh(run);
        for (int i = gpus.size() - 1; i >= 0; i--) {
            if (gpus.get(i).uuid().equals(uuid)) {
                return gpuCause(gpus, i, from);
            }
        }
        return new Cause("unknown", "its GPU is not known (the agent reports no rank-to-GPU mapping)", Map.of());
    }

    /**
     * The cause for slow GPU {@code all.get(self)} among the run's GPUs: throttled or slow clocks, else less busy than
     * the others.
     */
    private Cause gpuCause(List<GpuSeries> all, int self, double from) {
        GpuSeries g = all.get(self);
        double[] clocks = all.stream().mapToDouble(x -> busyClockRatio(x, from)).toArray();
        double[] utils = all.stream().mapToDouble(x -> mean(x, from, Reading.UTILIZATION)).toArray();
        double[] sms = all.stream().mapToDouble(x -> mean(x, from, Reading.SM_ACTIVE)).toArray();
        double[] tensors = all.stream().mapToDouble(x -> mean(x, from, Reading.TENSOR_ACTIVE)).toArray();
        double clock = clocks[self];
        double otherClock = medianExcept(clocks, self);
        List<String> reasons = throttleReasons(g, from);
        Map<String, Object> details = Texts.gpuEvidence(g);
        if (!reasons.isEmpty() || (!Double.isNaN(clock) && otherClock > 0 && clock < otherClock * 0.95)) {
            if (!Double.isNaN(clock)) {
                details.put("sm_clock_ratio", Texts.round(clock, 3));
            }
            if (!Double.isNaN(otherClock)) {
                details.put("others_median_sm_clock_ratio", Texts.round(otherClock, 3));
            }
            details.put("throttle_reasons", reasons);
            return new Cause("compute", "slow in compute: " + Texts.gpuName(g)
                    + (Double.isNaN(clock) ? "" : " runs at " + Texts.pct(clock) + " of its maximum clock")
                    + (reasons.isEmpty() ? "" : " (" + String.join(", ", reasons) + ")"), details);
        }
        double util = utils[self];
        double otherUtil = medianExcept(utils, self);
        // Hardware activity counters, where the GPUs have them: SMs at work, not "a kernel ran".
        double sm = sms[self];
        double otherSm = medianExcept(sms, self);
        double tensor = tensors[self];
        double otherTensor = medianExcept(tensors, self);
        if (!Double.isNaN(sm) && !Double.isNaN(otherSm)) {
            details.put("sm_active_ratio", Texts.round(sm, 3));
            details.put("others_median_sm_active_ratio", Texts.round(otherSm, 3));
            if (!Double.isNaN(tensor) && !Double.isNaN(otherTensor)) {
                details.put("tensor_active_ratio", Texts.round(tensor, 3));
                details.put("others_median_tensor_active_ratio", Texts.round(otherTensor, 3));
            }
            if (sm < otherSm - 0.10) {
                return new Cause("waiting", "waiting: " + Texts.gpuName(g) + " keeps " + Texts.pct(sm)
                        + " of its SMs at work where the others keep " + Texts.pct(otherSm)
                        + (Double.isNaN(util) || Double.isNaN(otherUtil) ? "" : " (utilisation " + Texts.pct(util)
                                + " against " + Texts.pct(otherUtil) + ")"), details);
            }
            return new Cause("compute", "slow in compute: " + Texts.gpuName(g) + " keeps its SMs as busy as the "
                    + "others (" + Texts.pct(sm) + " against " + Texts.pct(otherSm) + ")"
                    + (Double.isNaN(tensor) || Double.isNaN(otherTensor) ? "" : ", tensor pipes " + Texts.pct(tensor)
                            + " against " + Texts.pct(otherTensor))
                    + ", at full clock: the rank does more work per step (a larger bucket or sequence?)", details);
        }
        if (!Double.isNaN(util) && !Double.isNaN(otherUtil) && util < otherUtil - 0.10) {
            details.put("utilization_ratio", Texts.round(util, 3));
            details.put("others_median_utilization_ratio", Texts.round(otherUtil, 3));
            return new Cause("waiting", "waiting: " + Texts.gpuName(g) + " is busy " + Texts.pct(util)
                    + " of the time where the others are busy " + Texts.pct(otherUtil), details);
        }
        return new Cause("compute", "slow in compute: " + Texts.gpuName(g) + " is as busy as the others at full "
                + "clock, so the rank does more work per step (a larger bucket or sequence?)", details);
    }

    /** Reasons that throttled at least half the busy samples at or after {@code from}. */
    private List<String> throttleReasons(GpuSeries g, double from) {
        int[] c = busyWithReasons(g, from, throttleMask);
        return c[0] > 0 && c[1] * 2 >= c[0] ? GpuSeries.reasonNames(c[2]) : List.of();
    }

    /**
     * Over the busy samples at or after {@code from} (as {@code throttling} reads them): how many, how many with a
     * reason of {@code mask}, the reasons seen.
     */
    static int[] busyWithReasons(GpuSeries g, double from, int mask) {
        int[] c = new int[3];
        for (int i = g.firstIndexAtOrAfter(from); i < g.size(); i++) {
            if (g.reading(Reading.UTILIZATION, i) >= GpuSample.THROTTLING_BUSY_RATIO) {
                c[0]++;
                int m = g.clockEventMask(i) & mask;
                c[1] += m != 0 ? 1 : 0;
                c[2] |= m;
            }
        }
        return c;
    }

    private Optional<Finding> byGpu(RunContext run, double from, boolean active) {
        // Loops, not streams, here and in the helpers below: the run's every GPU's window at each evaluation.
        List<GpuSeries> gpus = new ArrayList<>(fresh(run));
        gpus.removeIf(g -> g.size() - g.firstIndexAtOrAfter(from) < 10);
        if (gpus.size() < 2) {
            return Optional.empty();
        }
        double[] clocks = new double[gpus.size()];
        double[] utils = new double[gpus.size()];
        for (int i = 0; i < gpus.size(); i++) {
            clocks[i] = busyClockRatio(gpus.get(i), from);
            utils[i] = medianUtilization(gpus.get(i), from);
        }
        for (int i = 0; i < gpus.size(); i++) {
            double otherClock = medianExcept(clocks, i);
            double clockNeeded = active ? (1 + s.clockRatio()) / 2 : s.clockRatio();
            if (!Double.isNaN(clocks[i]) && otherClock > 0 && clocks[i] < otherClock * clockNeeded) {
                return Optional.of(slowClock(run, gpus.get(i), clocks[i], otherClock, from));
            }
        }
        // A GPU slowed down in hardware (thermal, power brake) for most of the newest stretch: its clock there
        // against the others' there, without waiting for the minute's median to turn.
        double hardwareFrom = run.now() - seconds(s.hardwareWindow());
        double[] recentClocks = new double[gpus.size()];
        for (int i = 0; i < gpus.size(); i++) {
            recentClocks[i] = busyClockRatio(gpus.get(i), hardwareFrom);
        }
        for (int i = 0; i < gpus.size(); i++) {
            double otherClock = medianExcept(recentClocks, i);
            if (!Double.isNaN(recentClocks[i]) && otherClock > 0 && recentClocks[i] < otherClock * s.clockRatio()
                    && hardwareSlowdownShare(gpus.get(i), hardwareFrom) >= 0.5) {
                return Optional.of(slowClock(run, gpus.get(i), recentClocks[i], otherClock, hardwareFrom)
                        .withSustain(s.hardwareSustain()));
            }
        }
        if (run.isActive(AnomalyKind.GPU_IDLE) || StallPhase.beforeFirstStep(run)) {
            return Optional.empty();
        }
        for (int i = 0; i < gpus.size(); i++) {
            if (WindowStats.idleSeconds(gpus.get(i), 0.05) >= 60) {
                continue; // idle now: unused rather than slow
            }
            double otherUtil = medianExcept(utils, i);
            double gap = active ? s.utilizationGap() / 2 : s.utilizationGap();
            if (!Double.isNaN(utils[i]) && utils[i] > 0.05 && otherUtil >= 0.6 && utils[i] < otherUtil - gap) {
                GpuSeries g = gpus.get(i);
                Map<String, Object> evidence = Texts.gpuEvidence(g);
                evidence.put("utilization_ratio", Texts.round(utils[i], 3));
                evidence.put("others_median_utilization_ratio", Texts.round(otherUtil, 3));
                rankOf(run, g.uuid()).ifPresent(r -> evidence.put("rank", r));
                evidence.put("slow_in", "waiting");
                String message = String.format(Locale.ROOT, "%s is busy %s of the time while the run's other GPUs "
                        + "are busy %s: its rank is waiting", Texts.gpuName(g), Texts.pct(utils[i]),
                        Texts.pct(otherUtil));
                return Optional.of(new Finding(Severity.WARNING, message, evidence,
                        "the rank on that GPU does less work or waits on something the others do not: check its "
                                + "data shard and loader workers, and that it is not sharing the GPU or CPU cores"));
            }
        }
        return Optional.empty();
    }

    private Finding slowClock(RunContext run, GpuSeries g, double clock, double otherClock, double from) {
        List<String> reasons = throttleReasons(g, from);
        Map<String, Object> evidence = Texts.gpuEvidence(g);
        evidence.put("sm_clock_ratio", Texts.round(clock, 3));
        evidence.put("others_median_sm_clock_ratio", Texts.round(otherClock, 3));
        rankOf(run, g.uuid()).ifPresent(r -> evidence.put("rank", r));
        evidence.put("slow_in", "compute");
        evidence.put("throttle_reasons", reasons);
        String message = String.format(Locale.ROOT, "%s runs at %s of its maximum clock while the run's "
                + "other GPUs run at %s: every step waits for it; slow in compute%s", Texts.gpuName(g),
                Texts.pct(clock), Texts.pct(otherClock),
                reasons.isEmpty() ? "" : " (" + String.join(", ", reasons) + ")");
        return new Finding(Severity.WARNING, message, evidence,
                "check that GPU's cooling and power (see throttling) or move the job off that GPU");
    }

    /** Share of the busy samples at or after {@code from} with a hardware slowdown reason; 0 with fewer than 5. */
    private double hardwareSlowdownShare(GpuSeries g, double from) {
        int[] c = busyWithReasons(g, from, hardwareMask);
        return c[0] >= 5 ? (double) c[1] / c[0] : 0;
    }

    private static Optional<Integer> rankOf(RunContext run, String uuid) {
        return run.gpuOfRank().entrySet().stream().filter(e -> e.getValue().equals(uuid)).map(Map.Entry::getKey)
                .min(Integer::compare);
    }

    /** Median utilisation over the window: a stretch shorter than half the window does not move it. */
    private static double medianUtilization(GpuSeries g, double from) {
        return WindowStats.median(g, from, 1, i -> g.reading(Reading.UTILIZATION, i));
    }

    /**
     * Median SM clock over its maximum of the busy samples in the window (at least 5): a stretch of low clocks
     * shorter than half the window does not move it.
     */
    private static double busyClockRatio(GpuSeries g, double from) {
        // clockRatio is at most 1 and NaN when unknown: no infinity to leave out
        return WindowStats.median(g, from, 5,
                i -> g.reading(Reading.UTILIZATION, i) >= 0.5 ? g.clockRatio(i) : Double.NaN);
    }

    private static double medianExcept(double[] values, int skip) {
        double[] rest = new double[values.length - 1];
        int n = 0;
        for (int i = 0; i < values.length; i++) {
            if (i != skip && !Double.isNaN(values[i])) {
                rest[n++] = values[i];
            }
        }
        return Stats.medianInPlace(rest, n);
    }
}
