package dev.trainwatch.estimator.config;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The configs of the LoRA trainers of today's DiTs: kohya sd-scripts' and musubi-tuner's training TOML (the
 * command-line flags as keys, with the {@code dataset_config} TOML it names) and ai-toolkit's job YAML
 * ({@code config.process[0]} with {@code model}, {@code network}, {@code train}, {@code datasets}). What maps to a
 * spec field is read; what does not (a layer-offloading share, a sampler) becomes a note, never a guess. Stateless.
 */
final class TrainerConfigs {

    private static final ObjectMapper TOML = new TomlMapper();
    /** The blocks' linears kohya, musubi and ai-toolkit put LoRA adapters on by default. */
    static final List<String> BLOCK_LINEARS = List.of("attention", "mlp", "modulation");

    private TrainerConfigs() {
    }

    /** True for an ai-toolkit job ({@code config: {process: [...]}}). */
    static boolean isAiToolkit(Map<String, Object> yaml) {
        return yaml.get("config") instanceof Map<?, ?> c && c.get("process") instanceof List<?>;
    }

    // ------------------------------------------------------------------------------------------ ai-toolkit

    /** An ai-toolkit job YAML's first process. */
    static RunSpec aiToolkit(Path file, Map<String, Object> yaml, Catalog catalog, List<String> notes) {
        Map<String, Object> process = map(file, first(file, map(file, yaml.get("config"), "config").get("process"),
                "config.process"), "config.process[0]");
        Map<String, Object> model = map(file, process.get("model"), "model");
        Map<String, Object> train = map(file, process.get("train"), "train");
        Map<String, Object> network = map(file, process.get("network"), "network");
        Map<String, Object> dataset = process.get("datasets") == null ? Map.of()
                : map(file, first(file, process.get("datasets"), "datasets"), "datasets[0]");
        String modelName = text(model.get("name_or_path"));
        String modelId = modelId(file, catalog, modelName, text(model.get("arch")));
        Integer rank = whole(file, network.get("linear"), "network.linear");
        String base = Boolean.TRUE.equals(model.get("quantize")) ? quantType(text(model.get("qtype"))) : null;
        boolean latents = truthy(dataset.get("cache_latents")) || truthy(dataset.get("cache_latents_to_disk"));
        boolean text = truthy(train.get("cache_text_embeddings")) || truthy(train.get("unload_text_encoder"));
        RunSpec spec = new RunSpec(modelId, null, null, whole(file, train.get("batch_size"), "train.batch_size"),
                largestSide(file, dataset.get("resolution")), null, null, null, precision(text(train.get("dtype"))),
                optimizer(text(train.get("optimizer"))), bool(train.get("gradient_checkpointing")),
                train.get("ema_config") instanceof Map<?, ?> ema ? bool(ema.get("use_ema")) : null, null, null, null,
                whole(file, train.get("gradient_accumulation_steps"), "train.gradient_accumulation_steps"),
                longOrNull(train.get("steps")))
                .withRegime(text ? "precomputed" : "online", latents ? "precomputed" : "online", null, null, null, null)
                .withPhysics(null, null, rank, rank == null ? null : BLOCK_LINEARS, null, null)
                .withTrainer(base, null)
                .withSampling(process.get("sample") == null ? null : sampleEvery(file,
                        map(file, process.get("sample"), "sample").get("sample_every"), "sample.sample_every", null, null,
                        notes));
        for (String key : List.of("low_vram", "layer_offloading", "layer_offloading_transformer_percent")) {
            if (model.get(key) != null) {
                notes.add("model." + key + " = " + model.get(key) + " is not priced (no block swap count to map it to)");
            }
        }
        if (dataset.get("resolution") instanceof List<?> sides && sides.size() > 1) {
            notes.add("datasets[0].resolution " + sides + ": priced at the largest bucket");
        }
        return spec;
    }

    // ------------------------------------------------------------------------------------------ kohya / musubi

    /**
     * kohya's or musubi's settings (a training TOML's keys or command-line flags, the same names), sections flattened
     * as kohya does; the dataset TOML {@code dataset_config} names resolved against {@code base}; {@code arch} (from
     * the script's name) before the network module's hint.
     */
    @SuppressWarnings("unchecked")
    static RunSpec kohya(Path file, Map<String, Object> settings, Path base, String arch, Catalog catalog,
                         List<String> notes) {
        Map<String, Object> t = new LinkedHashMap<>();
        settings.forEach((k, v) -> {
            if (v instanceof Map<?, ?> section) {
                t.putAll((Map<String, Object>) section);
            } else {
                t.put(k, v);
            }
        });
        String path = Stream.of("pretrained_model_name_or_path", "dit", "dit_high_noise").map(t::get)
                .filter(Objects::nonNull).findFirst().map(String::valueOf).orElse(null);
        String module = text(t.get("network_module"));
        String hint = arch != null ? arch : kohyaArch(module, text(t.get("task")));
        // musubi's --task names the Wan size and expert; its checkpoint names are often generic
        String modelId = modelId(file, catalog, t.get("task") != null && hint != null ? null : path, hint);
        Integer rank = whole(file, t.get("network_dim"), "network_dim");
        if (module != null && !module.startsWith("networks.lora")) {
            notes.add("network_module " + module + " is not priced: estimated as LoRA" + (rank == null ? "" : " rank " + rank));
        }
        Map<String, Object> dataset = Map.of();
        Object datasetPath = t.get("dataset_config");
        if (datasetPath != null) {
            Path resolved = base.resolve(String.valueOf(datasetPath)).normalize();
            try {
                dataset = datasetSettings(resolved);
            } catch (ConfigException e) {
                notes.add("dataset TOML " + datasetPath + (Files.exists(resolved) ? " not readable: " + e.reason()
                        : " not found") + "; resolution, batch and frames from the flags only");
            }
        }
        Object batchSetting = t.get("train_batch_size") != null ? t.get("train_batch_size") : dataset.get("batch_size");
        Integer batch = whole(file, batchSetting, "train_batch_size");
        Integer resolution = largestSide(file, t.get("resolution") != null ? t.get("resolution") : dataset.get("resolution"));
        // sd-scripts' Flux and SD3 scripts cache on request; musubi-tuner's always run from its caches.
        boolean cached = module != null && !module.equals("networks.lora_flux") && !module.equals("networks.lora_sd3");
        boolean latents = cached || truthy(t.get("cache_latents")) || truthy(t.get("cache_latents_to_disk"));
        boolean text = cached || truthy(t.get("cache_text_encoder_outputs"))
                || truthy(t.get("cache_text_encoder_outputs_to_disk"));
        boolean fp8 = truthy(t.get("fp8_base")) || truthy(t.get("fp8_scaled"));
        return new RunSpec(modelId, null, null, batch, resolution, null, null,
                whole(file, dataset.get("frames"), "target_frames"), precision(text(t.get("mixed_precision"))),
                optimizer(text(t.get("optimizer_type"))), bool(t.get("gradient_checkpointing")), false, null, null, null,
                whole(file, t.get("gradient_accumulation_steps"), "gradient_accumulation_steps"),
                longOrNull(t.get("max_train_steps")))
                .withRegime(text ? "precomputed" : "online", latents ? "precomputed" : "online", null, null, null, null)
                .withPhysics(null, null, rank, rank == null ? null : BLOCK_LINEARS, null, null)
                .withTrainer(fp8 ? "fp8" : null, whole(file, t.get("blocks_to_swap"), "blocks_to_swap"))
                .withSampling(sampleEvery(file, t.get("sample_every_n_steps"), "sample_every_n_steps",
                        t.get("sample_every_n_epochs"), "sample_every_n_epochs", notes));
    }

    /** {@code [general]} overridden by the first {@code [[datasets]]}: batch, largest resolution, most frames. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> datasetSettings(Path file) {
        Map<String, Object> d = toml(file);
        Map<String, Object> out = new LinkedHashMap<>();
        List<Map<String, Object>> layers = new ArrayList<>();
        if (d.get("general") instanceof Map<?, ?> g) {
            layers.add((Map<String, Object>) g);
        }
        if (d.get("datasets") instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof Map<?, ?> m) {
            layers.add((Map<String, Object>) m);
        }
        for (Map<String, Object> layer : layers) {
            for (String key : List.of("batch_size", "resolution")) {
                if (layer.get(key) != null) {
                    out.put(key, layer.get(key));
                }
            }
            if (layer.get("target_frames") instanceof List<?> frames && !frames.isEmpty()) {
                out.put("frames", frames.stream().mapToLong(f -> ((Number) f).longValue()).max().orElse(1));
            }
        }
        return out;
    }

    static String kohyaArch(String module, String task) {
        if (module == null) {
            return null;
        }
        return switch (module) {
            case "networks.lora_flux" -> "flux";
            case "networks.lora_sd3" -> "sd3";
            case "networks.lora_wan" -> task != null && task.toLowerCase(Locale.ROOT).contains("a14b") ? "wan22"
                    : task != null && task.contains("1.3B") ? "wan13" : "wan14";
            case "networks.lora_qwen_image" -> "qwen";
            case "networks.lora_zimage", "networks.lora_z_image" -> "zimage";
            case "networks.lora" -> "hunyuan";
            default -> null;
        };
    }

    // ------------------------------------------------------------------------------------------ shared

    /**
     * The catalog model a checkpoint path or repository id names: an alias or id in its file or repository name
     * first ({@code black-forest-labs/FLUX.1-dev}, {@code wan2.1_t2v_14B_bf16.safetensors}), else the trainer's own
     * architecture hint.
     */
    static String modelId(Path file, Catalog catalog, String path, String arch) {
        if (path != null) {
            String p = path.replace('\\', '/').toLowerCase(Locale.ROOT);
            Optional<ModelInfo> direct = catalog.model(p).or(() -> catalog.model(p.substring(p.lastIndexOf('/') + 1)));
            if (direct.isPresent()) {
                return direct.get().id();
            }
            for (String[] hint : PATH_HINTS) {
                if (p.contains(hint[0])) {
                    return hint[1];
                }
            }
        }
        String fromArch = arch == null ? null : switch (arch.toLowerCase(Locale.ROOT)) {
            case "flux" -> "flux.1-dev";
            case "sd3" -> "sd3.5-large";
            case "wan13", "wan21_1b" -> "wan2.1-t2v-1.3b";
            case "wan14", "wan21", "wan21_14b" -> "wan2.1-t2v-14b";
            case "wan22", "wan22_14b" -> "wan2.2-t2v-a14b";
            case "qwen", "qwen_image" -> "qwen-image";
            case "zimage", "zimage_turbo" -> "z-image-turbo";
            case "hunyuan", "hunyuan_video" -> "hunyuanvideo";
            case "ltx", "ltxv" -> "ltx-video";
            default -> null;
        };
        if (fromArch == null) {
            throw new ConfigException(file, 0, "model '" + path + "' is not one trainwatch knows (see 'trainwatch"
                    + " models'; a user catalog, --catalog FILE, can describe it)");
        }
        return fromArch;
    }

    /** Substrings of checkpoint names, most specific first. */
    private static final String[][] PATH_HINTS = {
        {"schnell", "flux.1-schnell"}, {"flux", "flux.1-dev"}, {"3.5-medium", "sd3.5-medium"}, {"3.5_medium", "sd3.5-medium"},
        {"3.5-large", "sd3.5-large"}, {"3.5_large", "sd3.5-large"}, {"wan2.2", "wan2.2-t2v-a14b"}, {"wan22", "wan2.2-t2v-a14b"},
        {"1.3b", "wan2.1-t2v-1.3b"}, {"1_3b", "wan2.1-t2v-1.3b"}, {"wan", "wan2.1-t2v-14b"}, {"hunyuan", "hunyuanvideo"},
        {"qwen", "qwen-image"}, {"cogvideox-5b", "cogvideox-5b"}, {"cogvideox-2b", "cogvideox-2b"}, {"ltx", "ltx-video"},
        {"z-image", "z-image-turbo"}, {"z_image", "z-image-turbo"}, {"zimage", "z-image-turbo"},
    };

    @SuppressWarnings("unchecked")
    static Map<String, Object> toml(Path file) {
        return (Map<String, Object>) ConfigReaders.tree(TOML, file, "TOML");
    }

    /** ai-toolkit's qtype (default qfloat8) as a base-weights storage. */
    static String quantType(String qtype) {
        if (qtype == null) {
            return "fp8";
        }
        String q = qtype.toLowerCase(Locale.ROOT);
        return q.contains("int4") || q.contains("uint4") ? "int4" : q.contains("int8") ? "int8" : q.contains("nf4") ? "nf4"
                : "fp8";
    }

    static String precision(String dtype) {
        if (dtype == null) {
            return null;
        }
        return switch (dtype.toLowerCase(Locale.ROOT)) {
            case "bf16", "bfloat16" -> "bf16";
            case "fp16", "float16" -> "fp16";
            case "fp32", "float32", "no" -> "fp32";
            default -> null;
        };
    }

    /** Trainer optimizer names as the estimator's (unknown ones are passed on: the estimator says which it knows). */
    static String optimizer(String name) {
        if (name == null) {
            return null;
        }
        String o = name.toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
        if (o.startsWith("bitsandbytes.optim.") || o.startsWith("torch.optim.")) {
            o = o.substring(o.lastIndexOf('.') + 1);
        }
        return switch (o) {
            case "adamw8bit", "adam8bit", "pagedadamw8bit" -> "adamw8bit";
            case "adamw", "adam", "adamwbf16", "optimiadamw" -> "adamw";
            case "adafactor", "transformers.optimization.adafactor" -> "adafactor";
            case "prodigy", "prodigyopt", "prodigyplusschedulefree" -> "prodigy";
            case "lion", "lion8bit", "came", "came8bit", "sgd" -> o;
            default -> name;
        };
    }

    static Integer largestSide(Path file, Object resolution) {
        if (resolution == null) {
            return null;
        }
        if (resolution instanceof Number n) {
            return n.intValue();
        }
        List<?> sides = resolution instanceof List<?> list ? list : List.of(String.valueOf(resolution).split(","));
        int largest = 0;
        for (Object side : sides) {
            try {
                largest = Math.max(largest, side instanceof Number n ? n.intValue() : Integer.parseInt(String.valueOf(side).strip()));
            } catch (NumberFormatException e) {
                throw new ConfigException(file, 0, "resolution should be pixels, got '" + resolution + "'");
            }
        }
        return largest > 0 ? largest : null;
    }

    /** Steps between sampling passes, null when none; one counted in epochs is a note (its step is not known). */
    static Integer sampleEvery(Path file, Object steps, String key, Object epochs, String epochKey,
            List<String> notes) {
        Integer n = whole(file, steps, key);
        if (epochs != null && (n == null || n <= 0)) {
            notes.add(epochKey + " " + epochs + ": samples every so many epochs; the step it samples at is not known");
        }
        return n != null && n > 0 ? n : null;
    }

    static Integer whole(Path file, Object value, String key) {
        if (value == null) {
            return null;
        }
        if (value instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            return n.intValue();
        }
        throw new ConfigException(file, 0, key + " should be a whole number, got '" + value + "'");
    }

    static Long longOrNull(Object value) {
        return value instanceof Number n ? n.longValue() : null;
    }

    static Boolean bool(Object value) {
        return value instanceof Boolean b ? b : null;
    }

    static boolean truthy(Object value) {
        return Boolean.TRUE.equals(value);
    }

    static String text(Object value) {
        return value == null ? null : String.valueOf(value);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Path file, Object value, String key) {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map<?, ?>)) {
            throw new ConfigException(file, 0, "'" + key + "' should be a mapping");
        }
        return (Map<String, Object>) value;
    }

    private static Object first(Path file, Object list, String key) {
        if (!(list instanceof List<?> l) || l.isEmpty()) {
            throw new ConfigException(file, 0, "'" + key + "' should be a non-empty list");
        }
        return l.get(0);
    }
}
