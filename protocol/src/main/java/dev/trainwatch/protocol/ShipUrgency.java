package dev.trainwatch.protocol;

import java.util.List;

/**
 * What in a poll's readings and new step reports an agent that holds its polls for a batch ({@code --ship-every})
 * sends at once, with what it held before: a busy GPU slowed down in hardware, a loss that turns NaN or infinite, a
 * rank's step reports that turn starved ({@link WaitShareWatch}; the polls of the next few seconds then follow one by
 * one) and a multi-scale bucket larger than any before ({@link BucketWatch}). Events and a change of which GPUs
 * belong to which run are the caller's to add. One home for the rule: the agent and the collector's tests' scenario
 * player both ask it. Call {@link #urgent} once per poll, in order. Not thread-safe: one agent's poll thread.
 */
public final class ShipUrgency {

    private final WaitShareWatch waits = new WaitShareWatch();
    private final BucketWatch buckets = new BucketWatch();
    private final int hurryPollsPerTurn;
    private int hurryPolls;

    /**
     * @param intervalNanos the agent's polling interval
     * @param batched       whether the agent holds polls at all (with a batch every poll, hurrying is moot)
     */
    public ShipUrgency(long intervalNanos, boolean batched) {
        this.hurryPollsPerTurn = batched ? WaitShareWatch.hurryPolls(intervalNanos) : 0;
    }

    /** Whether this poll, with these readings and the step reports it read, must be sent at once. */
    public boolean urgent(List<GpuSample> samples, List<StepEvent> newSteps) {
        WaitShareWatch.Seen wait = waits.read(newSteps);
        boolean largerBucket = buckets.read(newSteps);
        boolean hurried = hurryPolls > 0;
        if (hurried) {
            hurryPolls--;
        }
        if (wait == WaitShareWatch.Seen.TURNED_ABOVE) {
            hurryPolls = hurryPollsPerTurn;
        }
        return hurried || wait.urgent() || largerBucket || StepEvent.anyNonFiniteLoss(newSteps)
                || GpuSample.anyClockEventReasonWhileBusy(samples, GpuSample.HARDWARE_SLOWDOWNS,
                        GpuSample.THROTTLING_BUSY_RATIO);
    }
}
