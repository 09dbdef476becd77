package dev.trainwatch.agent.log;

import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;

/**
 * Lines in which a training script says it is saving a checkpoint or running an evaluation, so a pause in its step
 * reports is known for what it is. Recognised (any case): "Saving checkpoint", "Saving current state" (accelerate),
 * "Saving model"; "Saved checkpoint", "Saved state to", "Checkpoint saved" (said after the save: the pause before
 * the line was the save); "Running validation", "Running evaluation", "Start evaluation", "Generating validation
 * images" (Sana, diffusers, PixArt's log_validation); the LoRA trainers' sampling: ai-toolkit's "Generating baseline
 * samples before training" and "Generating Images"/"Generating Samples" bars, kohya's "generating sample images";
 * their start-up phases, caching and quantizing (see {@link #startUpPhase}). Lines are pre-filtered on bytes, so noise
 * lines cost a scan.
 */
final class PhaseLines {

    /**
     * A phase the log announced: {@code checkpoint}, {@code checkpoint_saved}, {@code evaluation}, {@code caching} or
     * {@code quantizing}, at {@code ts}.
     */
    record Phase(String kind, double ts) {
    }

    private static final ByteScan.Needle[] NEEDLES = {
        ByteScan.Needle.of("heckpoint".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("state".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("alidation".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("valuation".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("aving model".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("enerating ".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("aching".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("cache".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("uantiz".getBytes(StandardCharsets.US_ASCII)),
        ByteScan.Needle.of("uantis".getBytes(StandardCharsets.US_ASCII)),
    };

    private PhaseLines() {
    }

    /** The phase {@code line} announces, or null; {@code readTs} when the line carries no timestamp. */
    static Phase of(byte[] bytes, int offset, int length, double readTs, ZoneId zone) {
        boolean candidate = false;
        for (ByteScan.Needle n : NEEDLES) {
            if (ByteScan.contains(bytes, offset, length, n)) {
                candidate = true;
                break;
            }
        }
        if (!candidate) {
            return null;
        }
        String line = LogText.stripAnsi(new String(bytes, offset, length, StandardCharsets.UTF_8));
        String lower = line.toLowerCase(Locale.ROOT);
        String kind = null;
        if (containsAny(lower, List.of("saved checkpoint", "saved state to", "checkpoint saved", "saved model to"))) {
            kind = "checkpoint_saved";
        } else if (containsAny(lower, List.of("saving checkpoint", "saving current state", "saving model"))) {
            kind = "checkpoint";
        } else if (containsAny(lower, List.of("running validation", "running evaluation", "start evaluation",
                "generating validation images", "running inference for validation", "generating baseline samples",
                "generating samples", "generating images", "generating sample images"))) {
            kind = "evaluation";
        } else {
            kind = startUpPhase(lower);
        }
        if (kind == null) {
            return null;
        }
        Double ts = LogText.timestamp(line, zone);
        return new Phase(kind, ts != null ? ts : readTs);
    }

    /**
     * The LoRA trainers' start-up phases, which can take minutes to hours before the first step: {@code caching}
     * (latents and text-encoder outputs: kohya's and musubi-tuner's "caching latents", SimpleTuner's "Creating VAE
     * latent cache", OneTrainer's {@code caching:} bar, ai-toolkit's "Caching text embeddings") and {@code quantizing}
     * (ai-toolkit's "Quantizing transformer", " - quantizing 40 transformer blocks").
     */
    private static String startUpPhase(String lower) {
        if (containsAny(lower, List.of("caching latents", "caching text", "caching:", "latent cache", "cache latents",
                "cache text encoder", "caching the text", "caching embeddings"))) {
            return "caching";
        }
        if (containsAny(lower, List.of("quantizing ", "quantising "))) {
            return "quantizing";
        }
        return null;
    }

    /** Whether {@code kind} is a start-up phase ({@code caching}, {@code quantizing}). */
    static boolean isStartUp(String kind) {
        return "caching".equals(kind) || "quantizing".equals(kind);
    }

    private static boolean containsAny(String s, List<String> parts) {
        for (String p : parts) {
            if (s.contains(p)) {
                return true;
            }
        }
        return false;
    }
}
