package dev.trainwatch.protocol.testing;

import dev.trainwatch.protocol.MonotonicClock;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock moved by hand, in UTC: the project's one settable clock. Thread-safe for one writer (volatile). */
public final class SettableClock extends Clock {

    private volatile Instant now;

    public SettableClock(Instant start) {
        this.now = start;
    }

    /** A clock at {@code seconds} since the epoch (millisecond precision). */
    public static SettableClock atSeconds(double seconds) {
        return new SettableClock(MonotonicClock.toInstant(seconds));
    }

    public void set(Instant instant) {
        now = instant;
    }

    public void advance(Duration d) {
        now = now.plus(d);
    }

    public void advanceSeconds(double seconds) {
        now = now.plusNanos((long) (seconds * 1e9));
    }

    /** Jumps to {@code seconds} since the epoch (millisecond precision). */
    public void setSeconds(double seconds) {
        now = MonotonicClock.toInstant(seconds);
    }

    /** Seconds since the epoch, millisecond precision. */
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

    @Override
    public long millis() {
        return now.toEpochMilli();
    }
}
