package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.estimator.Suggestion;
import dev.trainwatch.protocol.RunSpec;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
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
     * "Precompute the features" with the saving the estimator gives for that change applied to this run: the run
     * re-priced with precomputed features and anchored on its own observed step, data and encoder times (what
     * {@code trainwatch estimate --from-run RUN --features precomputed} computes). Without a spec or an estimate, the
     * seconds the run itself spends encoding (or waiting before the model runs, when the log does not split loading
     * from encoding — then "up to").
     *
     * @param stepSeconds   the observed median step
     * @param encodingShare the share of it spent encoding (or waiting, when {@code upperBound}: the data timer then
     *                      holds the loader and the encoders, as PixArt's {@code time_data} does)
     * @param loaderShare   the share spent waiting for the loader alone when the log splits it, NaN otherwise
     */
    static String precomputeFromObserved(RunContext run, double stepSeconds, double encodingShare, double loaderShare,
                                         boolean upperBound) {
        Estimate e = run.estimate();
        if (!(stepSeconds > 0) || !(encodingShare > 0)) {
            return suggestion(e, "precompute").map(x -> describe(x, e))
                    .orElse("precompute the text and VAE features once");
        }
        String what = encoders(e).orElse("text and VAE");
        String how = what.contains("T5") ? " (PixArt: load_t5_feat/load_vae_feat)" : "";
        Repricing r = repricedWithPrecomputedFeatures(run, stepSeconds, encodingShare, loaderShare, upperBound);
        if (r != null && r.stepSeconds() < stepSeconds) {
            long freed = r.source().peakMemoryBytes() - r.target().peakMemoryBytes();
            String frees = freed > 0 ? " and free about " + gib(freed) + " of GPU memory" : "";
            if (upperBound && stepSeconds - r.stepSeconds() < 0.5 * encodingShare * stepSeconds) {
                // The data timer holds the loader and the encoders, and by their price the encoders are the smaller
                // part: the loader is what to fix first; precomputing still saves what the estimate says.
                return String.format(Locale.ROOT, "make the input pipeline faster: more DataLoader workers "
                        + "(num_workers), pin_memory=True and persistent_workers=True, data on local NVMe — by the "
                        + "estimate priced from this run's own steps, about %s of its %s data time is the online %s "
                        + "encoding and the rest waits for the loader; precomputing the features%s would take a step "
                        + "from %s to about %s (%s less)%s", secs(stepSeconds - r.stepSeconds()),
                        secs(encodingShare * stepSeconds), what, how, secs(stepSeconds), secs(r.stepSeconds()),
                        pct(1 - r.stepSeconds() / stepSeconds), frees);
            }
            return String.format(Locale.ROOT, "precompute the %s features%s: priced from this run's own %s steps (as "
                    + "trainwatch estimate --from-run does), they take about %s of each step, so a step would take "
                    + "about %s (%s less)%s", what, how, secs(stepSeconds), secs(stepSeconds - r.stepSeconds()),
                    secs(r.stepSeconds()), pct(1 - r.stepSeconds() / stepSeconds), freed > 0 ? "," + frees : "");
        }
        double saved = stepSeconds * encodingShare;
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "precompute the %s features%s: this run spends %s%s of each %s step on them, so a step would take "
                        + "about %s (%s less)", what, how, upperBound ? "up to " : "", secs(saved), secs(stepSeconds),
                secs(stepSeconds - saved), pct(encodingShare)));
        suggestion(e, "precompute").filter(x -> x.savesBytes() > 0)
                .ifPresent(x -> b.append(", and free about ").append(gib(x.savesBytes()))
                        .append(" of GPU memory (estimate)"));
        return b.toString();
    }

    /** The run re-priced with precomputed features, anchored on what was observed; null when it cannot be. */
    static Repricing repricedWithPrecomputedFeatures(RunContext run, double stepSeconds, double encodingShare,
                                                     double loaderShare, boolean upperBound) {
        RunSpec spec = run.spec();
        if (spec == null || run.estimate() == null || !"online".equalsIgnoreCase(spec.features())) {
            return null;
        }
        ObservedRun observed;
        try {
            if (upperBound) {
                observed = new ObservedRun(spec, stepSeconds, Math.min(encodingShare, 0.999) * stepSeconds, null, null,
                        true);
            } else {
                Double loader = Double.isNaN(loaderShare) ? null : Math.min(loaderShare, 0.999) * stepSeconds;
                double encoders = Math.min(encodingShare, 0.999) * stepSeconds;
                if (loader != null && loader + encoders >= stepSeconds) {
                    loader = null;
                }
                observed = new ObservedRun(spec, stepSeconds, loader, encoders, null, false);
            }
        } catch (RuntimeException impossible) {
            return null;
        }
        return run.reprice(observed, spec.withFeatures("precomputed"));
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

    /** Evidence that starts with the GPU it is about. */
    static Map<String, Object> gpuEvidence(GpuSeries g) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("gpu_uuid", g.uuid());
        evidence.put("host", g.host());
        return evidence;
    }

    static String gpuName(GpuSeries g) {
        return "GPU " + g.index() + " on " + g.host();
    }
}
