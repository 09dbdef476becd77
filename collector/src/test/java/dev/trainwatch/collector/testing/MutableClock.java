package dev.trainwatch.collector.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock tests move by hand. Not thread-safe beyond a volatile read. */
public final class MutableClock extends Clock {

    private volatile Instant now;

    public MutableClock(Instant start) {
        this.now = start;
    }

    public void advance(Duration d) {
        now = now.plus(d);
    }

    public void advanceSeconds(double seconds) {
        now = now.plusNanos((long) (seconds * 1e9));
    }

    /** Jumps to {@code seconds} since the epoch (millisecond precision). */
    public void setSeconds(double seconds) {
        now = Instant.ofEpochMilli(Math.round(seconds * 1000));
    }

    public double seconds() {
        return now.toEpochMilli() / 1000.0;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now;
    }
}
