package dev.trainwatch.agent.log;

import java.util.List;
import java.util.Locale;

/** Builds the parser for a {@code --log-format} value: a preset name or a regular expression. */
public final class StepLineParsers {

    /** Preset names accepted by {@link #forFormat(String)}. */
    public static final List<String> PRESETS = List.of("auto", "pixart", "sana", "dit", "opensora", "accelerate",
            "deepspeed");

    private StepLineParsers() {
    }

    /**
     * A fresh parser for {@code format}: {@code auto}, {@code pixart}, {@code sana}, {@code dit}, {@code opensora},
     * {@code accelerate} (also kohya, musubi-tuner, ai-toolkit, SimpleTuner, OneTrainer, finetrainers bars),
     * {@code deepspeed} (diffusion-pipe) (case-insensitive; null or blank means {@code auto}), or else a regular expression with
     * named groups (see {@link RegexLineParser}).
     *
     * @throws IllegalArgumentException with a one-line message for an invalid regular expression or one without
     *                                  a {@code step} group
     */
    public static StepLineParser forFormat(String format) {
        if (format == null || format.isBlank()) {
            return new AutoLineParser();
        }
        return switch (format.trim().toLowerCase(Locale.ROOT)) {
            case "auto" -> new AutoLineParser();
            case "pixart", "pixart-alpha", "pixart-sigma" -> new PixArtLineParser();
            case "sana" -> new SanaLineParser();
            case "dit" -> new DitLineParser();
            case "opensora", "open-sora" -> new OpenSoraLineParser();
            case "accelerate", "tqdm", "diffusers", "kohya", "musubi", "ai-toolkit", "simpletuner", "onetrainer",
                    "finetrainers" -> new TqdmLineParser();
            case "deepspeed", "diffusion-pipe" -> new DeepSpeedLineParser();
            default -> new RegexLineParser(format);
        };
    }
}
