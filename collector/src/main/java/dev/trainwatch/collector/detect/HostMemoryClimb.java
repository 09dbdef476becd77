package dev.trainwatch.collector.detect;

/**
 * A node's {@code MemAvailable} falling steadily toward nothing: a line fitted over the window, falling in both halves
 * of it and still at its end (docs/DETECTORS.md, {@code host_memory}).
 *
 * @param bytesPerSecond how fast {@code MemAvailable} falls (positive)
 * @param secondsLeft    until nothing is available at this rate
 */
record HostMemoryClimb(double bytesPerSecond, double r2, double spanSeconds, double secondsLeft) {

    /** The newest stretch over which the fall must go on. */
    private static final double RECENT_SECONDS = 120;

    /** The climb on {@code h} now, or null. {@code minBytesPerSecond}: slower is churn. */
    static HostMemoryClimb of(HostMemorySeries h, double now, DetectorSettings.HostMemory s,
                              double minBytesPerSecond) {
        double from = now - s.climbWindow().toMillis() / 1000.0;
        int first = h.firstIndexAtOrAfter(from);
        int n = h.size();
        if (n - first < 6) {
            return null;
        }
        double firstTs = h.ts(first);
        double span = h.ts(n - 1) - firstTs;
        if (span < s.climbMinSpan().toMillis() / 1000.0) {
            return null;
        }
        Stats.LeastSquares all = fit(h, firstTs, Double.POSITIVE_INFINITY);
        double mid = firstTs + span / 2;
        double slope = -all.slope();
        if (!(slope >= minBytesPerSecond) || !(all.r2() >= s.climbMinR2())
                || !(-fit(h, firstTs, mid).slope() >= minBytesPerSecond / 2)
                || !(-fit(h, mid, Double.POSITIVE_INFINITY).slope() >= Math.max(minBytesPerSecond / 2, slope / 2))
                || !(-fit(h, h.ts(n - 1) - RECENT_SECONDS, Double.POSITIVE_INFINITY).slope()
                        >= Math.max(minBytesPerSecond / 2, slope / 4))) {
            return null;
        }
        double available = h.memAvailableBytes(n - 1);
        return Double.isNaN(available) ? null : new HostMemoryClimb(slope, all.r2(), span, available / slope);
    }

    /** A least-squares line through MemAvailable over the readings in [fromTs, toTs). */
    static Stats.LeastSquares fit(HostMemorySeries h, double fromTs, double toTs) {
        Stats.LeastSquares fit = new Stats.LeastSquares();
        for (int i = h.firstIndexAtOrAfter(fromTs); i < h.size() && h.ts(i) < toTs; i++) {
            if (!Double.isNaN(h.memAvailableBytes(i))) {
                fit.add(h.ts(i), h.memAvailableBytes(i));
            }
        }
        return fit;
    }
}
