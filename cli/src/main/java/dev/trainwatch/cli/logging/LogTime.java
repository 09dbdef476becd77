package dev.trainwatch.cli.logging;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * A record's time as {@code ISO_INSTANT} writes it truncated to milliseconds, by hand for the years 0 to 9999: the
 * formatter loads some fifty classes an agent logging now and then would carry for life.
 */
final class LogTime {
    private LogTime() {}

    static String format(Instant time) {
        long seconds = time.getEpochSecond();
        int millis = time.getNano() / 1_000_000;
        long days = Math.floorDiv(seconds, 86_400L);
        int secondOfDay = (int) Math.floorMod(seconds, 86_400L);
        // Days since 1970-01-01 to the proleptic Gregorian calendar (H. Hinnant's civil_from_days).
        long z = days + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long dayOfEra = z - era * 146_097;
        long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        long mp = (5 * dayOfYear + 2) / 153;
        long day = dayOfYear - (153 * mp + 2) / 5 + 1;
        long month = mp < 10 ? mp + 3 : mp - 9;
        long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
        if (year < 0 || year > 9999) {
            return DateTimeFormatter.ISO_INSTANT.format(time.truncatedTo(ChronoUnit.MILLIS));
        }
        StringBuilder out = new StringBuilder(24);
        digits(out, year, 4).append('-');
        digits(out, month, 2).append('-');
        digits(out, day, 2).append('T');
        digits(out, secondOfDay / 3600, 2).append(':');
        digits(out, secondOfDay / 60 % 60, 2).append(':');
        digits(out, secondOfDay % 60, 2);
        if (millis != 0) {
            digits(out.append('.'), millis, 3);
        }
        return out.append('Z').toString();
    }

    private static StringBuilder digits(StringBuilder out, long value, int width) {
        String s = Long.toString(value);
        for (int i = s.length(); i < width; i++) {
            out.append('0');
        }
        return out.append(s);
    }
}
