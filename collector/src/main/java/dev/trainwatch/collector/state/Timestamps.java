package dev.trainwatch.collector.state;

/** Client timestamps as the fleet keeps them. */
final class Timestamps {
    private Timestamps() {
    }

    /** A client timestamp, clamped to now (a skewed agent clock must not put samples in the future). */
    static double stamp(double ts, double now) {
        return !Double.isFinite(ts) || ts <= 0 || ts > now ? now : ts;
    }
}
