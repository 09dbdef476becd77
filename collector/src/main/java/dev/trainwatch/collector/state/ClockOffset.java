package dev.trainwatch.collector.state;

/**
 * One agent's clock minus the collector's, from the send times its batches carry ({@code sent_at}). A batch
 * arrives after it was made, so {@code sent_at - received} is the offset minus the delay: the largest of the recent
 * ones — the batch that came fastest — is the estimate. A replayed batch from the spool, made long ago, only gives
 * a small value and does not move it; the window of the last {@value #WINDOW} batches lets a clock that was
 * corrected (NTP stepped it) be followed within that many batches. Not thread-safe (the fleet's lock guards it).
 */
final class ClockOffset {
    static final int WINDOW = 30;

    private final double[] recent = new double[WINDOW];
    private int count;
    private int next;
    private double estimate;

    /** Adds a batch made at {@code sentAt} (agent's clock) that arrived at {@code received} (collector's). */
    void observe(double sentAt, double received) {
        recent[next] = sentAt - received;
        next = (next + 1) % WINDOW;
        count = Math.min(WINDOW, count + 1);
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, recent[i]);
        }
        estimate = max;
    }

    /** True once a batch carried a send time. */
    boolean known() {
        return count > 0;
    }

    /** The estimate in seconds (positive: the agent's clock is ahead); 0 before any batch carried a send time. */
    double seconds() {
        return count == 0 ? 0 : estimate;
    }
}
