package dev.trainwatch.agent;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses human durations: {@code 500ms}, {@code 1s}, {@code 2.5s}, {@code 1m}. Pure. */
public final class Durations {

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)");

    private Durations() {
    }

    /**
     * @throws IllegalArgumentException with a one-line message when the text is not a duration
     */
    public static Duration parse(String text) {
        Matcher m = DURATION.matcher(text == null ? "" : text.strip().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration; use e.g. 500ms, 1s, 2.5s or 1m");
        }
        String unit = m.group(2);
        BigDecimal value = new BigDecimal(m.group(1));
        BigDecimal millis = switch (unit) {
            case "ms" -> value;
            case "s" -> value.scaleByPowerOfTen(3);
            default -> value.multiply(BigDecimal.valueOf(60_000));
        };
        if (millis.stripTrailingZeros().scale() > 0) {
            throw new IllegalArgumentException("'" + text + "' is finer than a millisecond");
        }
        return Duration.ofMillis(millis.longValueExact());
    }

    /** The duration as {@link #parse} reads it back: {@code 500ms}, {@code 1s}, {@code 2.5s}. */
    public static String text(Duration duration) {
        long millis = duration.toMillis();
        return millis < 1000 ? millis + "ms"
                : BigDecimal.valueOf(millis).movePointLeft(3).stripTrailingZeros().toPlainString() + "s";
    }

    /** Seconds with a fraction, for the wire. */
    public static double seconds(Duration duration) {
        return duration.toNanos() / 1e9;
    }
}
