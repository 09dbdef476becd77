package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Suggestion;
import java.util.Locale;
import java.util.Optional;

/** Number formatting and estimator look-ups shared by the detectors' messages. */
final class Texts {

    private Texts() {
    }

    static String gib(double bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (1L << 30));
    }

    static String pct(double ratio) {
        return String.format(Locale.ROOT, "%.0f%%", ratio * 100);
    }

    static String secs(double seconds) {
        if (seconds >= 120) {
            return String.format(Locale.ROOT, "%.1f min", seconds / 60);
        }
        return String.format(Locale.ROOT, seconds < 10 ? "%.2f s" : "%.0f s", seconds);
    }

    static String times(double ratio) {
        return String.format(Locale.ROOT, "%.1f×", ratio);
    }

    static double round(double v, int decimals) {
        double f = Math.pow(10, decimals);
        return Math.round(v * f) / f;
    }

    /** The estimator's first suggestion whose wording contains {@code keyword} (case-insensitive). */
    static Optional<Suggestion> suggestion(Estimate estimate, String keyword) {
        if (estimate == null || estimate.suggestions() == null) {
            return Optional.empty();
        }
        String k = keyword.toLowerCase(Locale.ROOT);
        return estimate.suggestions().stream()
                .filter(s -> s.change() != null && s.change().toLowerCase(Locale.ROOT).contains(k))
                .findFirst();
    }

    /**
     * A suggestion as a sentence with its numbers: the estimator's wording already says what it saves when it
     * ends with the numbers ("…: saves 9.7 GB, 60% less step time"); otherwise the numbers are added.
     */
    static String describe(Suggestion s, Estimate base) {
        if (s.change().contains(": ")) {
            return s.change();
        }
        StringBuilder b = new StringBuilder(s.change());
        String sep = ": ";
        if (s.savesBytes() > 0) {
            b.append(sep).append("saves ").append(gib(s.savesBytes()));
            sep = " and ";
        }
        if (base != null && base.stepSeconds() > 0 && s.newStepSeconds() < base.stepSeconds() * 0.99) {
            b.append(sep).append("about ").append(pct(1 - s.newStepSeconds() / base.stepSeconds()))
                    .append(" less step time");
        }
        return b.toString();
    }

    static String gpuName(GpuSeries g) {
        return "GPU " + g.index() + " on " + g.host();
    }
}
