package dev.trainwatch.cli.demo;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.function.LongSupplier;

/**
 * A clock from the wall time running {@code speed} times as fast, for a time-compressed demo; the speed is
 * {@link DemoStack#start}'s, checked there. Thread-safe.
 */
final class ScaledClock extends Clock {

    private final Instant origin;
    private final long originNanos;
    private final double speed;
    private final ZoneId zone;
    private final LongSupplier nanoTime;

    ScaledClock(Instant origin, double speed, ZoneId zone, LongSupplier nanoTime) {
        this.origin = origin;
        this.speed = speed;
        this.zone = zone;
        this.nanoTime = nanoTime;
        this.originNanos = nanoTime.getAsLong();
    }

    /** Starts now, at the system's wall time, running {@code speed} times as fast. */
    static ScaledClock startingNow(double speed) {
        return new ScaledClock(Instant.now(), speed, ZoneId.systemDefault(), System::nanoTime);
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId newZone) {
        return new ScaledClock(instant(), speed, newZone, nanoTime);
    }

    @Override
    public Instant instant() {
        return origin.plusNanos((long) ((nanoTime.getAsLong() - originNanos) * speed));
    }
}
