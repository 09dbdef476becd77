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
     * Median of the first {@code n} values, sorted in place (a caller's scratch array: no copy): the middle one, or
     * the mean of the middle two, in {@link Arrays#sort(double[])} order; NaN when {@code n} is 0.
     */
    public static double medianInPlace(double[] values, int n) {
        if (n <= 0) {
            return Double.NaN;
        }
        Arrays.sort(values, 0, n);
        int m = n / 2;
        return n % 2 == 1 ? values[m] : (values[m - 1] + values[m]) / 2;
    }

    public static double median(Collection<? extends Number> values) {
        return median(values.stream().mapToDouble(Number::doubleValue).toArray());
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
