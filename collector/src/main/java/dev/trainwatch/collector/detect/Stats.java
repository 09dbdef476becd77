package dev.trainwatch.collector.detect;

import java.util.Arrays;
import java.util.Collection;

/**
 * The small statistics the collector uses, written once: medians and a least-squares line. Pure; NaN where a
 * figure does not exist (no values, fewer than three points, no spread in x).
 */
public final class Stats {
    private Stats() {
    }

    /** {@code v}, or 0 for NaN (a part no report gave). */
    public static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    /** Median of the values (NaN when empty). Sorts a copy. */
    public static double median(double[] values) {
        return median(values, values.length);
    }

    /** Median of the first {@code n} values (NaN when {@code n} is 0). Leaves {@code values} as they are. */
    public static double median(double[] values, int n) {
        if (n <= 0) {
            return Double.NaN;
        }
        return medianInPlace(Arrays.copyOf(values, n), n);
    }

    /**
     * Median of the first {@code n} values, reordering them (for a caller's scratch array: no copy): the same value as
     * sorting them with {@link Arrays#sort(double[])} and taking the middle one (the mean of the middle two for an
     * even count), found by selection in linear time instead. NaN when {@code n} is 0.
     */
    public static double medianInPlace(double[] values, int n) {
        if (n <= 0) {
            return Double.NaN;
        }
        int m = n / 2;
        int order = order(values, n);
        if (order == ASCENDING) {
            return n % 2 == 1 ? values[m] : (values[m - 1] + values[m]) / 2;
        }
        double upper = order == TOTAL ? selectTotal(values, n, m) : selectPlain(values, n, m);
        if (n % 2 == 1) {
            return upper;
        }
        // After the selection values[0, m) are all at or below values[m]: the largest of them is the (m-1)-th.
        double lower = values[0];
        for (int i = 1; i < m; i++) {
            if (order == TOTAL ? Double.compare(values[i], lower) > 0 : values[i] > lower) {
                lower = values[i];
            }
        }
        return (lower + upper) / 2;
    }

    /** {@link #order}: in ascending order already (no NaN, no -0.0). */
    private static final int ASCENDING = 0;
    /** {@link #order}: no NaN and no -0.0, so {@code <} orders as {@link Double#compare} does. */
    private static final int PLAIN = 1;
    /** {@link #order}: a NaN or a -0.0, the values where {@code <} and {@link Double#compare} differ. */
    private static final int TOTAL = 2;

    private static int order(double[] values, int n) {
        boolean ascending = true;
        for (int i = 0; i < n; i++) {
            double v = values[i];
            if (v != v || Double.doubleToRawLongBits(v) == Long.MIN_VALUE) {
                return TOTAL;
            }
            ascending &= i == 0 || values[i - 1] <= v;
        }
        return ascending ? ASCENDING : PLAIN;
    }

    /**
     * The {@code k}-th smallest of {@code values[0, n)} in {@link Double#compare} order (the order
     * {@link Arrays#sort(double[])} sorts in: -0.0 before 0.0, NaN last), partitioning the array around it: after the
     * call {@code values[0, k)} are at or below {@code values[k]} and {@code values(k, n)} at or above it. Hoare's
     * FIND (as Wirth writes it), which stays linear when many values are equal.
     */
    static double select(double[] values, int n, int k) {
        return switch (order(values, n)) {
            case ASCENDING -> values[k];
            case PLAIN -> selectPlain(values, n, k);
            default -> selectTotal(values, n, k);
        };
    }

    /** {@link #select} with {@code <}: for values without NaN and -0.0. */
    private static double selectPlain(double[] values, int n, int k) {
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            double pivot = values[k];
            int i = lo;
            int j = hi;
            do {
                while (values[i] < pivot) {
                    i++;
                }
                while (pivot < values[j]) {
                    j--;
                }
                if (i <= j) {
                    double t = values[i];
                    values[i] = values[j];
                    values[j] = t;
                    i++;
                    j--;
                }
            } while (i <= j);
            if (j < k) {
                lo = i;
            }
            if (k < i) {
                hi = j;
            }
        }
        return values[k];
    }

    /**
     * {@link #select} in {@link Double#compare} order, for values with a NaN or a -0.0 (rare: a reading a GPU did not
     * have): a sort of the range, which leaves it partitioned as {@link #select} promises.
     */
    private static double selectTotal(double[] values, int n, int k) {
        Arrays.sort(values, 0, n);
        return values[k];
    }

    public static double median(Collection<? extends Number> values) {
        double[] v = new double[values.size()];
        int i = 0;
        for (Number x : values) {
            v[i++] = x.doubleValue();
        }
        return median(v, i);
    }

    /**
     * A least-squares line fitted point by point. The x values are taken relative to the first point's, so that
     * sums of unix times keep their precision.
     */
    public static final class LeastSquares {
        private double x0 = Double.NaN;
        private int n;
        private double sx;
        private double sy;
        private double sxx;
        private double sxy;
        private double syy;

        /** Adds a point; NaN values are left out. */
        public void add(double x, double y) {
            if (Double.isNaN(x) || Double.isNaN(y)) {
                return;
            }
            if (Double.isNaN(x0)) {
                x0 = x;
            }
            double dx = x - x0;
            n++;
            sx += dx;
            sy += y;
            sxx += dx * dx;
            sxy += dx * y;
            syy += y * y;
        }

        public int count() {
            return n;
        }

        private double varianceX() {
            return sxx - sx * sx / n;
        }

        /** The slope (y per x); NaN with fewer than three points or no spread in x. */
        public double slope() {
            if (n < 3 || !(varianceX() > 0)) {
                return Double.NaN;
            }
            return (sxy - sx * sy / n) / varianceX();
        }

        /** The line's value at x = 0 (in the caller's x, not the shifted one); NaN when there is no slope. */
        public double intercept() {
            double slope = slope();
            if (Double.isNaN(slope)) {
                return Double.NaN;
            }
            return (sy - slope * sx) / n - slope * x0;
        }

        /** The share of y's variance the line explains (0 when y does not vary); NaN when there is no slope. */
        public double r2() {
            double slope = slope();
            if (Double.isNaN(slope)) {
                return Double.NaN;
            }
            double vy = syy - sy * sy / n;
            double cxy = sxy - sx * sy / n;
            return vy > 0 ? (cxy * cxy) / (varianceX() * vy) : 0;
        }
    }
}
