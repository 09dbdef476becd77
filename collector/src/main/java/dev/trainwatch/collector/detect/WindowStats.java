package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import java.util.Arrays;
import java.util.function.IntToDoubleFunction;
import java.util.stream.IntStream;

/**
 * Statistics over windows, shared by the detectors and the run view so both say the same numbers. Pure
 * functions; NaN means "no data".
 */
public final class WindowStats {

    private WindowStats() {
    }

    public static int reports(StepSeries s, double fromTs) {
        return s.size() - s.firstIndexAtOrAfter(fromTs);
    }

    public static double medianStepSeconds(StepSeries s, double fromTs) {
        return Stats.median(IntStream.range(s.firstIndexAtOrAfter(fromTs), s.size()).mapToDouble(s::timeS).toArray());
    }

    /** Mean seconds per step over the reports at or after {@code fromTs} (each report once), NaN when none. */
    public static double meanStepSeconds(StepSeries s, double fromTs) {
        int first = s.firstIndexAtOrAfter(fromTs);
        return first < s.size()
                ? IntStream.range(first, s.size()).mapToDouble(s::timeS).reduce(0, Double::sum) / (s.size() - first)
                : Double.NaN;
    }

    public enum StepPart { DATA, TEXT_ENCODER, VAE }

    /**
     * Share of step time spent in {@code part}, weighted by the steps each report covers, over the reports at or
     * after {@code fromTs} that carry it; NaN when none does.
     */
    public static double stepShare(StepSeries s, double fromTs, StepPart part) {
        double partSum = 0;
        double timeSum = 0;
        for (int i = s.firstIndexAtOrAfter(fromTs); i < s.size(); i++) {
            double p = switch (part) {
                case DATA -> s.dataTimeS(i);
                case TEXT_ENCODER -> s.lmTimeS(i);
                case VAE -> s.vaeTimeS(i);
            };
            double t = s.timeS(i);
            if (Double.isNaN(p) || !(t > 0)) {
                continue;
            }
            partSum += Math.min(p, t) * s.intervalSteps(i);
            timeSum += t * s.intervalSteps(i);
        }
        return timeSum > 0 ? partSum / timeSum : Double.NaN;
    }

    /**
     * Share of step time spent in {@code part} for the run: with two or more ranks reporting it, the largest share
     * any rank spends (every rank waits at the gradient all-reduce for the rank that waited longest, so the run
     * loses that rank's share, not the lead rank's); else the share in the run's step series.
     */
    public static double stepShare(StepSeries s, RankSeries ranks, double fromTs, StepPart part) {
        double worst = Double.NaN;
        int reporting = 0;
        for (int k = 0; k < ranks.count(); k++) {
            double share = stepShare(ranks.steps(k), fromTs, part);
            if (!Double.isNaN(share)) {
                reporting++;
                worst = Double.isNaN(worst) ? share : Math.max(worst, share);
            }
        }
        return reporting >= 2 ? worst : stepShare(s, fromTs, part);
    }

    /**
     * The gap expected between two step reports: the median gap seen, or the newest report's steps × seconds
     * per step, whichever is larger (a log printed every 20 steps reports every 20 step times). Several detectors ask
     * for it in one evaluation; the series may keep it until it changes ({@link StepSeries#expectedReportGapSeconds()}).
     */
    public static double expectedReportGapSeconds(StepSeries s) {
        int n = s.size();
        if (n == 0) {
            return Double.NaN;
        }
        double byInterval = s.intervalSteps(n - 1) * s.timeS(n - 1);
        if (n < 3) {
            return byInterval;
        }
        double[] gaps = new double[n - 1];
        for (int i = 1; i < n; i++) {
            gaps[i - 1] = s.ts(i) - s.ts(i - 1);
        }
        return Math.max(Stats.medianInPlace(gaps, n - 1), byInterval);
    }

    /** Mean of reading {@code r} over the entries at or after {@code fromTs} that have it; NaN when none. */
    public static double mean(GpuSeries g, double fromTs, Reading r) {
        return mean(g, fromTs, Double.POSITIVE_INFINITY, i -> g.reading(r, i));
    }

    /** Mean of {@code reading} over the entries in [{@code fromTs}, {@code toTs}) that have it; NaN when none. */
    public static double mean(GpuSeries g, double fromTs, double toTs, IntToDoubleFunction reading) {
        double sum = 0;
        int n = 0;
        for (int i = g.firstIndexAtOrAfter(fromTs); i < g.size() && g.ts(i) < toTs; i++) {
            double v = reading.applyAsDouble(i);
            if (!Double.isNaN(v)) {
                sum += v;
                n++;
            }
        }
        return n > 0 ? sum / n : Double.NaN;
    }

    /** {@code reading} at or after {@code fromTs} where not NaN, in order (a loop: every GPU, every evaluation). */
    public static double[] readings(GpuSeries g, double fromTs, IntToDoubleFunction reading) {
        int first = g.firstIndexAtOrAfter(fromTs);
        double[] v = new double[Math.max(0, g.size() - first)];
        int n = 0;
        for (int i = first; i < g.size(); i++) {
            double x = reading.applyAsDouble(i);
            if (!Double.isNaN(x)) {
                v[n++] = x;
            }
        }
        return n == v.length ? v : Arrays.copyOf(v, n);
    }

    /** Median of {@link #readings}; NaN when fewer than {@code least}. */
    public static double median(GpuSeries g, double fromTs, int least, IntToDoubleFunction reading) {
        double[] v = readings(g, fromTs, reading);
        return v.length >= least ? Stats.medianInPlace(v, v.length) : Double.NaN;
    }

    public static double maxMemory(GpuSeries g, double fromTs) {
        double max = Double.NaN;
        for (int i = g.firstIndexAtOrAfter(fromTs); i < g.size(); i++) {
            double m = g.memoryUsedBytes(i);
            max = Double.isNaN(max) || m > max ? m : max; // a NaN reading is never above, nor taken over a number
        }
        return max;
    }

    public static double latestMemory(GpuSeries g) {
        for (int i = g.size() - 1; i >= 0; i--) {
            if (!Double.isNaN(g.memoryUsedBytes(i))) {
                return g.memoryUsedBytes(i);
            }
        }
        return Double.NaN;
    }

    /**
     * Seconds the GPU has been idle up to its newest entry: the span of the trailing run of entries whose
     * utilisation is at or below {@code idleRatio}. 0 when the newest entry is busy or unknown.
     */
    public static double idleSeconds(GpuSeries g, double idleRatio) {
        int n = g.size();
        if (n == 0) {
            return 0;
        }
        int i = n - 1;
        while (i >= 0 && g.reading(Reading.UTILIZATION, i) <= idleRatio) {
            i--;
        }
        if (i == n - 1) {
            return 0;
        }
        // The idle run started after entry i (busy) ended, i.e. about at entry i+1.
        return g.ts(n - 1) - g.ts(i + 1);
    }

    /** A least-squares line through (ts, memory) points. */
    public record Trend(double slopePerSecond, double intercept, double r2, double spanSeconds, double lastTs,
                        double lastValue) {
    }

    public static Trend memoryTrend(GpuSeries g, double fromTs) {
        return memoryTrend(g, fromTs, Double.POSITIVE_INFINITY);
    }

    /** Memory trend over the entries in [{@code fromTs}, {@code toTs}); null with fewer than 3 points. */
    public static Trend memoryTrend(GpuSeries g, double fromTs, double toTs) {
        int from = g.firstIndexAtOrAfter(fromTs);
        Stats.LeastSquares fit = new Stats.LeastSquares();
        double firstTs = Double.NaN;
        double lastTs = Double.NaN;
        double lastValue = Double.NaN;
        for (int i = from; i < g.size() && g.ts(i) < toTs; i++) {
            double y = g.memoryUsedBytes(i);
            if (Double.isNaN(y)) {
                continue;
            }
            if (Double.isNaN(firstTs)) {
                firstTs = g.ts(i);
            }
            fit.add(g.ts(i), y);
            lastTs = g.ts(i);
            lastValue = y;
        }
        double slope = fit.slope();
        if (Double.isNaN(slope)) {
            return null;
        }
        return new Trend(slope, fit.intercept(), fit.r2(), lastTs - firstTs, lastTs, lastValue);
    }
}
