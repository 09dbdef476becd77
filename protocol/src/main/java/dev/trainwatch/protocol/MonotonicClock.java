package dev.trainwatch.protocol;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.LongSupplier;

/**
 * The wall clock as read at construction, advanced by {@link System#nanoTime()}: it never goes back or jumps when the
 * wall clock is stepped, so ages and windows are real durations. {@link #wallOffsetSeconds(Clock)} is the wall
 * clock's step since the anchor, to move a time for what reads the wall clock (Prometheus, Alertmanager); 0 for any
 * other {@link Clock}. Thread-safe.
 */
public final class MonotonicClock extends Clock {
    private final long anchorWallNanos;
    private final long anchorMonoNanos;
    private final LongSupplier wallNanos;
    private final LongSupplier monoNanos;
    private final ZoneId zone;

    private MonotonicClock(LongSupplier wallNanos, LongSupplier monoNanos, ZoneId zone, long anchorWallNanos,
            long anchorMonoNanos) {
        this.wallNanos = wallNanos;
        this.monoNanos = monoNanos;
        this.zone = zone;
        this.anchorWallNanos = anchorWallNanos;
        this.anchorMonoNanos = anchorMonoNanos;
    }

    /** A clock anchored on the system's wall clock now, in UTC. */
    public static MonotonicClock system() {
        return of(MonotonicClock::systemWallNanos, System::nanoTime);
    }

    /** A clock over the given sources (nanoseconds since the epoch; any monotonic nanosecond count), for tests. */
    public static MonotonicClock of(LongSupplier wallNanos, LongSupplier monoNanos) {
        return new MonotonicClock(wallNanos, monoNanos, ZoneOffset.UTC, wallNanos.getAsLong(),
                monoNanos.getAsLong());
    }

    private static long systemWallNanos() {
        Instant now = Clock.systemUTC().instant();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId newZone) {
        return newZone.equals(zone) ? this
                : new MonotonicClock(wallNanos, monoNanos, newZone, anchorWallNanos, anchorMonoNanos);
    }

    @Override
    public Instant instant() {
        long nanos = nowNanos();
        return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
    }

    @Override
    public long millis() {
        return Math.floorDiv(nowNanos(), 1_000_000L);
    }

    private long nowNanos() {
        return anchorWallNanos + (monoNanos.getAsLong() - anchorMonoNanos);
    }

    /** How far the wall clock is ahead of this clock now, in seconds: 0 until something steps it. */
    public double wallOffsetSeconds() {
        long mono = monoNanos.getAsLong();
        long wall = wallNanos.getAsLong();
        return (wall - (anchorWallNanos + (mono - anchorMonoNanos))) / 1e9;
    }

    /** The wall clock's lead over {@code clock} when it is a {@link MonotonicClock}; 0 for any other clock. */
    public static double wallOffsetSeconds(Clock clock) {
        return clock instanceof MonotonicClock m ? m.wallOffsetSeconds() : 0;
    }

    /** A wire timestamp (seconds since the epoch) as an instant, millisecond precision. */
    public static Instant toInstant(double unixSeconds) {
        return Instant.ofEpochMilli(Math.round(unixSeconds * 1000.0));
    }

    @Override
    public String toString() {
        return "MonotonicClock[" + zone + "]";
    }
}
