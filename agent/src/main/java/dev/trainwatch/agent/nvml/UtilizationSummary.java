package dev.trainwatch.agent.nvml;

import dev.trainwatch.protocol.UtilizationWindow;

/**
 * Summarises the driver's buffered GPU-utilisation samples of one poll interval. Plain Java so the arithmetic is
 * tested without native code.
 */
final class UtilizationSummary {

    /** A sample at or below this ratio counts as idle. */
    static final double IDLE_THRESHOLD = 0.05;

    private UtilizationSummary() {
    }

    /** The first {@code count} samples: times in unix µs, values 0–1; null when there are none. */
    static UtilizationWindow summarise(long[] timestampsMicros, double[] ratios, int count) {
        if (count <= 0) {
            return null;
        }
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        double sum = 0;
        int idle = 0;
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        for (int i = 0; i < count; i++) {
            double r = ratios[i];
            min = Math.min(min, r);
            max = Math.max(max, r);
            sum += r;
            if (r <= IDLE_THRESHOLD) {
                idle++;
            }
            from = Math.min(from, timestampsMicros[i]);
            to = Math.max(to, timestampsMicros[i]);
        }
        return new UtilizationWindow(count, min, sum / count, max, (double) idle / count, from / 1e6, to / 1e6);
    }
}
