package dev.trainwatch.agent.log;

/**
 * How many steps a logged mean covers. PixArt and Sana divide by the configured {@code log_interval} even when the
 * gap was shorter (an epoch's first line), so the regular gap (one seen twice in a row) lets them rescale.
 */
final class IntervalTracker {

    private long previousStep = -1;
    private long lastGap = -1;
    private long regularGap = -1;

    long observe(long step) {
        long gap = previousStep >= 0 && step > previousStep ? step - previousStep : -1;
        if (previousStep >= 0 && step <= previousStep) {
            lastGap = -1;
        }
        previousStep = step;
        if (gap > 0) {
            if (gap == lastGap) {
                regularGap = gap;
            }
            lastGap = gap;
        }
        return gap;
    }

    /** A gap as the step event's {@code interval_steps}: null when unknown, at most Integer.MAX_VALUE. */
    static Integer steps(long gap) {
        return gap > 0 ? (int) Math.min(gap, Integer.MAX_VALUE) : null;
    }

    boolean isFirst() {
        return previousStep < 0;
    }

    /** regular/gap when the gap is irregular, else 1. */
    double rescale(long gap) {
        return gap > 0 && regularGap > 0 && gap != regularGap ? (double) regularGap / gap : 1.0;
    }
}
