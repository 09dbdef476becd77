package dev.trainwatch.estimator;

import java.util.Locale;

/** How the estimator writes sizes and shares in its notes and suggestions. Stateless. */
final class Units {

    private Units() {
    }

    /** Bytes as GiB (1024³), one decimal: what {@code trainwatch estimate} prints. */
    static String gb(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }

    static String percent(double part, double whole) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * part / whole);
    }

    static String millions(long n) {
        return String.format(Locale.ROOT, "%.0fM", n / 1e6);
    }
}
