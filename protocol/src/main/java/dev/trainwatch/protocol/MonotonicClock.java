package dev.trainwatch.protocol;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.LongSupplier;

/**
 * The time trainwatch's agent and collector keep: the wall clock as it read when the clock was made, advanced by the
 * monotonic clock ({@link System#nanoTime()}) from then on. It never goes back and never jumps when NTP, an
 * operator or a suspended VM steps the wall clock, so every age, timeout and sustain window measured on it is a
 * real duration.
 *
 * <p>Where a time leaves the process for something that reads the wall clock (Prometheus' {@code time()},
 * Alertmanager's {@code startsAt}), {@link #toWall(double)} moves it by the wall clock's step since the anchor
 * ({@link #wallOffsetSeconds()}); a time that arrives in wall terms without a send time to correct it is moved
 * back with {@link #fromWall(double)}. For any other {@link Clock} (fixed and scaled clocks in tests and the
 * demo) both are the identity: see {@link #wallOffsetSeconds(Clock)}.
 *
 * <p>Thread-safe: the state is the two anchors, fixed at construction.
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

    /**
     * How far the wall clock is ahead of this clock now, in seconds: 0 until something steps the wall clock (plus
     * the slow drift between the two oscillators, milliseconds a day).
     */
    public double wallOffsetSeconds() {
        long mono = monoNanos.getAsLong();
        long wall = wallNanos.getAsLong();
        return (wall - (anchorWallNanos + (mono - anchorMonoNanos))) / 1e9;
    }

    /** A time on this clock (epoch seconds) as the wall clock reads it now. */
    public double toWall(double seconds) {
        return seconds + wallOffsetSeconds();
    }

    /** A wall-clock time (epoch seconds) on this clock. */
    public double fromWall(double seconds) {
        return seconds - wallOffsetSeconds();
    }

    /** The wall clock's lead over {@code clock} when it is a {@link MonotonicClock}; 0 for any other clock. */
    public static double wallOffsetSeconds(Clock clock) {
        return clock instanceof MonotonicClock m ? m.wallOffsetSeconds() : 0;
    }

    @Override
    public String toString() {
        return "MonotonicClock[" + zone + "]";
    }
}
