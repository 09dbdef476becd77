package dev.trainwatch.collector.state;

/**
 * One agent's clock minus the collector's, from the send times its batches carry ({@code sent_at}). A batch
 * arrives after it was made, so {@code sent_at - received} is the offset minus the delay: the largest of the recent
 * ones — the batch that came fastest — is the estimate. A replayed batch from the spool, made long ago, only gives
 * a small value and does not move it; the window of the last {@value #WINDOW} batches lets a clock that was
 * corrected (NTP stepped it) be followed within that many batches. A clock stepped back (an agent restarted on a
 * node whose clock is 15 minutes behind) is followed at once when the send time is the request's
 * ({@code Trainwatch-Sent-At}, {@link #observeRequest}): a request is answered within seconds, so one that seems to
 * have taken more than {@value #STEP_BACK_SECONDS} s came from a clock that moved, and the window starts again from
 * it; otherwise the run would look {@code stalled} until the window had forgotten the old clock. Not thread-safe (the
 * fleet's lock guards it).
 */
final class ClockOffset {
    static final int WINDOW = 30;

    private final double[] recent = new double[WINDOW];
    private int count;
    private int next;
    private double estimate;

    /**
     * Longer than any request takes to arrive (the agent gives up on a request after 10 s): a request send time
     * further below the estimate than this is a clock stepped back.
     */
    static final double STEP_BACK_SECONDS = 30;

    /**
     * Adds a request that left the agent at {@code sentAt} (agent's clock) and arrived at {@code received}: as
     * {@link #observe}, and a clock stepped back is taken at once.
     */
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
