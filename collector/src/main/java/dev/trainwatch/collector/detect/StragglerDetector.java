package dev.trainwatch.collector.detect;

import java.util.ArrayList;
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
public final class StragglerDetector implements Detector {

    private final DetectorSettings.Straggler s;

    public StragglerDetector(DetectorSettings settings) {
        this.s = settings.straggler();
    }

    @Override
    public AnomalyKind kind() {
        return AnomalyKind.STRAGGLER;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        double from = run.now() - s.window().toMillis() / 1000.0;
        Optional<Finding> byRank = byRank(run, from, active);
        return byRank.isPresent() ? byRank : byGpu(run, from, active);
    }

    private Optional<Finding> byRank(RunContext run, double from, boolean active) {
        Map<Integer, Double> means = WindowStats.meanStepSecondsByRank(run.ranks(), from);
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
        double median = WindowStats.median(others);
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
        String message = String.format(Locale.ROOT, "rank %d takes %s per step where the other %d ranks take %s "
                + "(%s)", slowest, Texts.secs(slowestMean), others.length, Texts.secs(median), Texts.times(ratio));
        return Optional.of(new Finding(Severity.WARNING, message, evidence,
                "look at rank " + slowest + "'s GPU and node: throttling, a slower or shared GPU, its data loader "
                        + "workers or disk; every rank waits for it at each all-reduce"));
    }

    private Optional<Finding> byGpu(RunContext run, double from, boolean active) {
        List<GpuSeries> gpus = new ArrayList<>();
        for (GpuSeries g : run.gpus()) {
            if (!OomRiskDetector.stale(run, g) && g.size() - g.firstIndexAtOrAfter(from) >= 10) {
                gpus.add(g);
            }
        }
        if (gpus.size() < 2) {
            return Optional.empty();
        }
        double[] clocks = new double[gpus.size()];
        double[] utils = new double[gpus.size()];
        for (int i = 0; i < gpus.size(); i++) {
            clocks[i] = busyClockRatio(gpus.get(i), from);
            utils[i] = WindowStats.meanUtilization(gpus.get(i), from);
        }
        for (int i = 0; i < gpus.size(); i++) {
            double otherClock = medianExcept(clocks, i);
            double clockNeeded = active ? (1 + s.clockRatio()) / 2 : s.clockRatio();
            if (!Double.isNaN(clocks[i]) && otherClock > 0 && clocks[i] < otherClock * clockNeeded) {
                GpuSeries g = gpus.get(i);
                Map<String, Object> evidence = new LinkedHashMap<>();
                evidence.put("gpu_uuid", g.uuid());
                evidence.put("host", g.host());
                evidence.put("sm_clock_ratio", Texts.round(clocks[i], 3));
                evidence.put("others_median_sm_clock_ratio", Texts.round(otherClock, 3));
                String message = String.format(Locale.ROOT, "%s runs at %s of its maximum clock while the run's "
                        + "other GPUs run at %s: every step waits for it", Texts.gpuName(g), Texts.pct(clocks[i]),
                        Texts.pct(otherClock));
                return Optional.of(new Finding(Severity.WARNING, message, evidence,
                        "check that GPU's cooling and power (see throttling) or move the job off that GPU"));
            }
        }
        if (run.isActive(AnomalyKind.GPU_IDLE)) {
            return Optional.empty();
        }
        for (int i = 0; i < gpus.size(); i++) {
            if (WindowStats.idleSeconds(gpus.get(i), 0.05) >= 60) {
                continue; // idle now: unused rather than slow
            }
            double otherUtil = medianExcept(utils, i);
            double gap = active ? s.utilizationGap() / 2 : s.utilizationGap();
            // An idle GPU is not a straggler but unused (gpu_idle says so).
            if (!Double.isNaN(utils[i]) && utils[i] > 0.05 && otherUtil >= 0.6 && utils[i] < otherUtil - gap) {
                GpuSeries g = gpus.get(i);
                Map<String, Object> evidence = new LinkedHashMap<>();
                evidence.put("gpu_uuid", g.uuid());
                evidence.put("host", g.host());
                evidence.put("utilization_ratio", Texts.round(utils[i], 3));
                evidence.put("others_median_utilization_ratio", Texts.round(otherUtil, 3));
                String message = String.format(Locale.ROOT, "%s is busy %s of the time while the run's other GPUs "
                        + "are busy %s", Texts.gpuName(g), Texts.pct(utils[i]), Texts.pct(otherUtil));
                return Optional.of(new Finding(Severity.WARNING, message, evidence,
                        "the rank on that GPU does less work or waits on something the others do not: check its "
                                + "data shard and loader workers, and that it is not sharing the GPU or CPU cores"));
            }
        }
        return Optional.empty();
    }

    private static double busyClockRatio(GpuSeries g, double from) {
        double sum = 0;
        int n = 0;
        for (int i = g.firstIndexAtOrAfter(from); i < g.size(); i++) {
            double c = g.smClockHz(i) / g.smClockMaxHz(i);
            if (g.utilizationRatio(i) >= 0.5 && !Double.isNaN(c) && !Double.isInfinite(c)) {
                sum += Math.min(1, c);
                n++;
            }
        }
        return n >= 5 ? sum / n : Double.NaN;
    }

    private static double medianExcept(double[] values, int skip) {
        double[] rest = new double[values.length - 1];
        int n = 0;
        for (int i = 0; i < values.length; i++) {
            if (i != skip && !Double.isNaN(values[i])) {
                rest[n++] = values[i];
            }
        }
        return WindowStats.median(java.util.Arrays.copyOf(rest, n));
    }
}
