package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MonotonicClockTest {
    private static final long T0 = Instant.parse("2026-11-28T07:00:00Z").getEpochSecond() * 1_000_000_000L;
    private final AtomicLong mono = new AtomicLong(5_000_000_000L);
    private final AtomicLong wall = new AtomicLong(T0);

    private void elapse(long nanos) {
        mono.addAndGet(nanos);
        wall.addAndGet(nanos);
    }

    @Test
    void startsAtTheWallClockAndAdvancesWithTheMonotonicOne() {
        MonotonicClock clock = MonotonicClock.of(wall::get, mono::get);
        assertThat(clock.instant()).isEqualTo(Instant.parse("2026-11-28T07:00:00Z"));
        elapse(1_500_000_000L);
        assertThat(clock.instant()).isEqualTo(Instant.parse("2026-11-28T07:00:01.500Z"));
        assertThat(clock.millis()).isEqualTo(Instant.parse("2026-11-28T07:00:01.500Z").toEpochMilli());
        assertThat(clock.wallOffsetSeconds()).isZero();
    }

    @Test
    void aSteppedWallClockMovesNeitherItsTimeNorItsAgesButTheOffsetToTheWall() {
        MonotonicClock clock = MonotonicClock.of(wall::get, mono::get);
        elapse(10_000_000_000L);
        double before = clock.millis() / 1000.0;
        wall.addAndGet(-3_600_000_000_000L); // NTP steps the wall clock back an hour
        elapse(2_000_000_000L);
        double after = clock.millis() / 1000.0;
        assertThat(after - before).isCloseTo(2.0, within(1e-9));
        assertThat(clock.wallOffsetSeconds()).isCloseTo(-3600.0, within(1e-9));
        assertThat(after + clock.wallOffsetSeconds()).isCloseTo(wall.get() / 1e9, within(1e-6));
    }

    @Test
    void otherClocksHaveNoOffsetAndTheZoneIsKept() {
        assertThat(MonotonicClock.wallOffsetSeconds(Clock.systemUTC())).isZero();
        MonotonicClock clock = MonotonicClock.of(wall::get, mono::get);
        Clock shanghai = clock.withZone(ZoneId.of("Asia/Shanghai"));
        assertThat(shanghai.getZone()).isEqualTo(ZoneId.of("Asia/Shanghai"));
        assertThat(shanghai.instant()).isEqualTo(clock.instant());
    }

    @Test
    void theSystemClockIsWithinMillisecondsOfTheWallClock() {
        MonotonicClock clock = MonotonicClock.system();
        assertThat(Math.abs(clock.millis() - System.currentTimeMillis())).isLessThan(1000);
        assertThat(Math.abs(clock.wallOffsetSeconds())).isLessThan(1.0);
    }

    @Test
    void wireSecondsBecomeInstantsRoundedToTheMillisecond() {
        assertThat(MonotonicClock.toInstant(1_700_000_000.0004)).isEqualTo(Instant.ofEpochMilli(1_700_000_000_000L));
        assertThat(MonotonicClock.toInstant(1.0006)).isEqualTo(Instant.ofEpochMilli(1_001L));
    }
}
