package dev.trainwatch.agent;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;

/** Parses human durations: {@code 500ms}, {@code 1s}, {@code 2.5s}, {@code 1m}. Pure. */
public final class Durations {

    private Durations() {
    }

    /**
     * @throws IllegalArgumentException with a one-line message when the text is not a duration
     */
    public static Duration parse(String text) {
        // What the pattern (\d+(?:\.\d+)?)\s*(ms|s|m) matches, read by hand: the agent loads no regular expressions
        // for its one duration.
        String s = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        int i = digits(s, 0);
        if (i > 0 && i < s.length() && s.charAt(i) == '.') {
            int end = digits(s, i + 1);
            i = end > i + 1 ? end : -1;
        }
        String unit = "";
        if (i > 0) {
            int u = i;
            while (u < s.length() && " \t\n\u000B\f\r".indexOf(s.charAt(u)) >= 0) {
                u++;
            }
            unit = s.substring(u);
        }
        if (i <= 0 || !(unit.equals("ms") || unit.equals("s") || unit.equals("m"))) {
            throw new IllegalArgumentException("'" + text + "' is not a duration; use e.g. 500ms, 1s, 2.5s or 1m");
        }
        BigDecimal value = new BigDecimal(s.substring(0, i));
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

    /** The index after the ASCII digits of {@code s} from {@code from} on. */
    private static int digits(String s, int from) {
        int i = from;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
        }
        return i;
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
