package dev.trainwatch.collector.state;

/**
 * One agent's clock minus the collector's, from its send times: {@code sent_at - received} is the offset minus the
 * delay, so the largest of the last {@value #WINDOW} is the estimate (a replayed batch does not move it). A request
 * send time more than {@value #STEP_BACK_SECONDS} s below it is a clock stepped back, taken at once. Guarded by the
 * fleet's lock.
 */
final class ClockOffset {
    static final int WINDOW = 30;

    private final double[] recent = new double[WINDOW];
    private int count;
    private int next;
    private double estimate;

    /** Longer than any request takes to arrive (the agent gives up after 10 s). */
    static final double STEP_BACK_SECONDS = 30;

    /** A request sent at {@code sentAt} that arrived at {@code received}: as {@link #observe}, and a step back counts. */
    void observeRequest(double sentAt, double received) {
        if (count > 0 && sentAt - received < estimate - STEP_BACK_SECONDS) {
            count = 0;
            next = 0;
        }
        observe(sentAt, received);
    }

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
