package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.PhaseProgress;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;

/**
 * Lines saying a script saves a checkpoint, evaluates, samples or is in a start-up phase, so a pause in its steps is
 * known for what it is (a bar gives progress); also ai-toolkit's {@code # OOM during training step, skipping batch 1/3 #}
 * (BaseSDTrainProcess.py since ostris/ai-toolkit@3b1f7b0). Pre-filtered on bytes.
 */
final class PhaseLines {

    static final String OOM_SKIPPED = "oom_skipped";

    record Phase(String kind, double ts, PhaseProgress progress) {
        Phase at(double newTs) {
            return new Phase(kind, newTs, progress);
        }

        boolean finished() {
            return progress != null && progress.total() != null && progress.done() >= progress.total();
        }
    }

    private static final ByteScan.Needle[] NEEDLES = ByteScan.needles("heckpoint", "state", "alidation", "valuation",
            "aving model", "enerating ", "aching", "cache", "uantiz", "uantis", "oading ", "skipping batch");
    private static final ByteScan.Needle[] BAR = ByteScan.needles("it/s", "s/it");

    private PhaseLines() {
    }

    /**
     * A phase line; else, while phase {@code open} (not a checkpoint) lasts, the progress a nameless bar shows for it:
     * ai-toolkit's after " - quantizing 40 transformer blocks", SimpleTuner's "Processing bucket" after "Creating VAE
     * latent cache", kohya's after "caching latents.".
     */
    static Phase of(String open, byte[] bytes, int offset, int length, double readTs, ZoneId zone) {
        String line = ByteScan.containsAny(bytes, offset, length, NEEDLES) ? decode(bytes, offset, length) : null;
        String kind = line == null ? null : kind(line.toLowerCase(Locale.ROOT));
        if (kind != null) {
            return at(line, kind, readTs, zone);
        }
        if (open == null || open.startsWith("checkpoint") || !ByteScan.containsAny(bytes, offset, length, BAR)) {
            return null;
        }
        Phase p = at(line != null ? line : decode(bytes, offset, length), open, readTs, zone);
        return p.progress() == null ? null : p;
    }

    private static String decode(byte[] bytes, int offset, int length) {
        return LogText.stripAnsi(new String(bytes, offset, length, StandardCharsets.UTF_8));
    }

    private static Phase at(String line, String kind, double readTs, ZoneId zone) {
        Double ts = LogText.timestamp(line, zone);
        TqdmBar bar = OOM_SKIPPED.equals(kind) ? null : TqdmBar.parse(line);
        PhaseProgress progress = bar == null ? null : new PhaseProgress(bar.n(), bar.total() < 0 ? null : bar.total(),
                bar.secondsPerIter() != null && bar.secondsPerIter() > 0 ? 1 / bar.secondsPerIter() : null);
        return new Phase(kind, ts != null ? ts : readTs, progress);
    }

    private static String kind(String lower) {
        if (lower.contains("oom during training step, skipping batch")) {
            return OOM_SKIPPED;
        }
        if (containsAny(lower, List.of("saved checkpoint", "saved state to", "checkpoint saved", "saved model to"))) {
            return "checkpoint_saved";
        }
        if (containsAny(lower, List.of("saving checkpoint", "saving current state", "saving model"))) {
            return "checkpoint";
        }
        if (containsAny(lower, List.of("running validation", "running evaluation", "start evaluation",
                "generating validation images", "running inference for validation", "generating baseline samples",
                "generating samples", "generating images", "generating sample images"))) {
            return "evaluation";
        }
        return startUpPhase(lower);
    }

    /**
     * Start-up phases that take minutes to hours: caching (kohya's and musubi-tuner's "caching latents", SimpleTuner's
     * "Creating VAE latent cache", OneTrainer's {@code caching:} bar, ai-toolkit's "Caching text embeddings"),
     * quantizing (ai-toolkit's "Quantizing transformer"), loading ("Loading transformer", "Loading checkpoint shards").
     */
    private static String startUpPhase(String lower) {
        if (containsAny(lower, List.of("caching latents", "caching text", "caching:", "latent cache", "cache latents",
                "cache text encoder", "caching the text", "caching embeddings"))) {
            return "caching";
        }
        if (containsAny(lower, List.of("quantizing ", "quantising "))) {
            return "quantizing";
        }
        return lower.stripLeading().startsWith("loading ") ? "loading" : null;
    }

    static boolean isStartUp(String kind) {
        return "caching".equals(kind) || "quantizing".equals(kind) || "loading".equals(kind);
    }

    private static boolean containsAny(String s, List<String> parts) {
        return parts.stream().anyMatch(s::contains);
    }
}
