package dev.trainwatch.agent.log;

/**
 * Infers how many steps a logged mean covers from consecutive step numbers. PixArt and Sana divide the interval's
 * wall time by the configured {@code log_interval} even when the interval was shorter (the first line of an
 * epoch, the line at step 1), so besides the raw gap this remembers the regular interval — a gap seen twice in a
 * row — to let those parsers rescale irregular intervals. Not thread-safe.
 */
final class IntervalTracker {

    private long previousStep = -1;
    private long lastGap = -1;
    private long regularGap = -1;

    /** Records {@code step}; returns the gap to the previous step, or -1 when unknown (first line, or a restart). */
    long observe(long step) {
        long gap = previousStep >= 0 && step > previousStep ? step - previousStep : -1;
        if (previousStep >= 0 && step <= previousStep) {
            // The run restarted (resumed from an earlier checkpoint, or a new run in the same file).
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

    /** The regular logging interval seen so far, or -1. */
    long regularGap() {
        return regularGap;
    }

    /** True before any step was observed. */
    boolean isFirst() {
        return previousStep < 0;
    }

    /**
     * Factor that turns a "sum over the gap divided by the configured interval" value into a per-step mean:
     * regular/gap when the gap is irregular, else 1.
     */
    double rescale(long gap) {
        if (gap > 0 && regularGap > 0 && gap != regularGap) {
            return (double) regularGap / gap;
        }
        return 1.0;
    }
}
