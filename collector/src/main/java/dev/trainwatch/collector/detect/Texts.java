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
     * "Precompute the features" with the saving taken from the run itself: the seconds of each observed step spent
     * encoding (or waiting before the model runs, when the log does not split loading from encoding — then "up
     * to"), and what a step would take without them. Only the memory freed comes from the estimator, because
     * memory per term is not observed.
     *
     * @param stepSeconds   the observed median step
     * @param encodingShare the share of it spent encoding (or waiting, when {@code upperBound})
     */
    static String precomputeFromObserved(Estimate e, double stepSeconds, double encodingShare, boolean upperBound) {
        if (!(stepSeconds > 0) || !(encodingShare > 0)) {
            return suggestion(e, "precompute").map(x -> describe(x, e))
                    .orElse("precompute the text and VAE features once");
        }
        double saved = stepSeconds * encodingShare;
        String what = encoders(e).orElse("text and VAE");
        String how = what.contains("T5") ? " (PixArt: load_t5_feat/load_vae_feat)" : "";
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "precompute the %s features%s: this run spends %s%s of each %s step on them, so a step would take "
                        + "about %s (%s less)", what, how, upperBound ? "up to " : "", secs(saved), secs(stepSeconds),
                secs(stepSeconds - saved), pct(encodingShare)));
        suggestion(e, "precompute").filter(x -> x.savesBytes() > 0)
                .ifPresent(x -> b.append(", and free about ").append(gib(x.savesBytes()))
                        .append(" of GPU memory (estimate)"));
        return b.toString();
    }

    /**
     * The encoders this run computes online, as the estimator names them for its model ("Gemma-2 and VAE" for Sana,
     * "T5 and VAE" for PixArt, "VAE" for a class-conditional DiT); empty without an estimate or when nothing is
     * encoded online.
     */
    static Optional<String> encoders(Estimate e) {
        return suggestion(e, "precompute ").map(Suggestion::change).map(c -> {
            int from = c.toLowerCase(Locale.ROOT).indexOf("precompute ") + "precompute ".length();
            int to = c.indexOf(" features", from);
            return to > from ? c.substring(from, to) : null;
        });
    }

    /**
     * A suggestion as a sentence with its numbers: the estimator's wording already says what it saves when it
     * ends with the numbers ("…: saves 9.0 GiB, 60% less step time"); otherwise the numbers are added.
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
