package dev.trainwatch.protocol;

import java.util.List;

/**
 * What in a poll an agent holding polls ({@code --ship-every}) sends at once: a busy GPU slowed in hardware, a
 * non-finite loss, reports turning starved ({@link WaitShareWatch}), a larger bucket ({@link BucketWatch}). Shared by
 * the agent and the collector tests' scenario player. Call {@link #urgent} once per poll. Not thread-safe.
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
        this.hurryPollsPerTurn = batched ? (int) Math.ceil(WaitShareWatch.HURRY_SECONDS * 1e9 / intervalNanos) : 0;
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
