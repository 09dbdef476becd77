package dev.trainwatch.collector.series;

import java.util.Arrays;
import java.util.function.IntToDoubleFunction;
import java.util.stream.IntStream;

/**
 * Splits time-ordered entries into at most {@code maxPoints} consecutive groups for downsampling. The first and the
 * last entry are always groups of their own, so a downsampled series starts and ends exactly where the raw one
 * does; the entries between are grouped by equal spans of time (not equal counts), so a burst of entries does
 * not squeeze the rest of the chart. Pure function.
 */
final class Buckets {

    private Buckets() {
    }

    /** Group boundaries: group {@code k} is entries {@code [bounds[k], bounds[k+1])}; {@code ts} non-decreasing. */
    static int[] split(int n, IntToDoubleFunction ts, int maxPoints) {
        if (maxPoints < 3) {
            throw new IllegalArgumentException("maxPoints must be at least 3");
        }
        if (n <= maxPoints) {
            return IntStream.rangeClosed(0, n).toArray();
        }
        int bins = maxPoints - 2;
        double first = ts.applyAsDouble(0);
        double width = (ts.applyAsDouble(n - 1) - first) / bins;
        int[] bounds = new int[maxPoints + 1];
        int groups = 0;
        bounds[groups++] = 0;
        bounds[groups++] = 1;
        int currentBin = -1;
        for (int i = 1; i < n - 1; i++) {
            int bin = width > 0 ? (int) Math.min(bins - 1, Math.max(0, (ts.applyAsDouble(i) - first) / width)) : 0;
            if (bin != currentBin && i > 1) {
                bounds[groups++] = i;
            }
            currentBin = bin;
        }
        bounds[groups++] = n - 1;
        bounds[groups++] = n;
        return Arrays.copyOf(bounds, groups);
    }
}
