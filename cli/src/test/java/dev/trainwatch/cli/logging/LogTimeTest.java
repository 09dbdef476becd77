package dev.trainwatch.cli.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** LogTime writes what ISO_INSTANT writes for the time truncated to milliseconds. */
class LogTimeTest {

    private static String expected(Instant t) {
        return DateTimeFormatter.ISO_INSTANT.format(t.truncatedTo(ChronoUnit.MILLIS));
    }

    @Test
    void sameAsIsoInstant() {
        for (Instant t : List.of(Instant.EPOCH, Instant.ofEpochMilli(1), Instant.ofEpochSecond(-1),
                Instant.ofEpochSecond(-1, 999_999_999), Instant.parse("2026-11-24T04:40:01.123Z"),
                Instant.parse("2026-11-24T04:40:01.000999Z"), Instant.parse("2000-02-29T23:59:59.999Z"),
                Instant.parse("1900-03-01T00:00:00Z"), Instant.parse("0000-01-01T00:00:00Z"),
                Instant.parse("9999-12-31T23:59:59.999999999Z"), Instant.parse("+10000-01-01T00:00:00Z"),
                Instant.parse("-0001-12-31T23:59:59Z"), Instant.MAX, Instant.MIN)) {
            assertThat(LogTime.format(t)).as(t.toString()).isEqualTo(expected(t));
        }
        SplittableRandom random = new SplittableRandom(24);
        long lo = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
        long hi = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        for (int i = 0; i < 200_000; i++) {
            Instant t = Instant.ofEpochSecond(random.nextLong(lo, hi), random.nextInt(1_000_000_000));
            assertThat(LogTime.format(t)).isEqualTo(expected(t));
        }
        for (long day = 0; day < 800; day++) { // every day of two years around a leap day, at midnight
            Instant t = Instant.parse("2027-06-01T00:00:00Z").plus(day, ChronoUnit.DAYS);
            assertThat(LogTime.format(t)).isEqualTo(expected(t));
        }
    }
}
