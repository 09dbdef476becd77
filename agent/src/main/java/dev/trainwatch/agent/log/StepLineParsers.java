package dev.trainwatch.agent.log;

import java.util.List;
import java.util.Locale;

/** Builds the parser for a {@code --log-format} value: a preset name or a regular expression. */
public final class StepLineParsers {

    public static final List<String> PRESETS = List.of("auto", "pixart", "sana", "dit", "opensora", "accelerate",
            "deepspeed");

    private StepLineParsers() {
    }

    /**
     * A fresh parser for a preset (case-insensitive; null or blank is auto; accelerate also covers kohya, musubi-tuner,
     * ai-toolkit, SimpleTuner, OneTrainer, finetrainers) or a regex; IllegalArgumentException (one line) for a bad one.
     */
    public static StepLineParser forFormat(String format) {
        return switch (format == null || format.isBlank() ? "auto" : format.trim().toLowerCase(Locale.ROOT)) {
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
