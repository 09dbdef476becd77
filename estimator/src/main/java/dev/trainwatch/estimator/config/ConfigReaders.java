package dev.trainwatch.estimator.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BinaryOperator;
import java.util.function.Function;

/**
 * Turns a training config into a {@link RunSpec}: PixArt's mmcv-style {@code .py} files (with {@code _base_}
 * inheritance) and Sana's {@code .yaml} files. Keys the estimator does not need are ignored; fields the config
 * does not say stay null so the model's defaults or command-line flags fill them. Stateless and thread-safe; the
 * only I/O is reading the named file and its bases.
 */
public final class ConfigReaders {

    private static final ObjectMapper YAML = new YAMLMapper();

    private ConfigReaders() {
    }

    /**
     * What a config says, resolved to what its training script does, and one line for each setting the reader saw
     * but could not map (so nothing is defaulted silently).
     */
    public record Read(RunSpec spec, List<String> notes) {
    }

    /**
     * Reads a config: PixArt-alpha/-Sigma and Open-Sora {@code .py} files (Open-Sora's are told apart by
     * {@code model = dict(type=...)}), Sana and ai-toolkit {@code .yaml} files (ai-toolkit's by {@code config.process}),
     * kohya sd-scripts / musubi-tuner training {@code .toml} files, and SimpleTuner's and OneTrainer's {@code .json}.
     *
     * @throws ConfigException one line naming the file, the line and why, when the file cannot be read or understood
     */
    public static Read readWithNotes(Path file, Catalog catalog) {
        String name = file.getFileName() == null ? "" : file.getFileName().toString().toLowerCase(Locale.ROOT);
        List<String> notes = new ArrayList<>();
        RunSpec spec;
        if (name.endsWith(".py")) {
            Map<String, Located> config = loadPython(file, new LinkedHashSet<>());
            Located model = config.get("model");
            spec = model != null && model.value() instanceof Map<?, ?>
                    ? OpenSoraReader.read(config, catalog, notes) : fromPixArt(file, config, catalog, notes);
        } else if (name.endsWith(".yaml") || name.endsWith(".yml")) {
            Map<String, Object> yaml = loadYaml(file, new LinkedHashSet<>());
            spec = TrainerConfigs.isAiToolkit(yaml) ? TrainerConfigs.aiToolkit(file, yaml, catalog, notes)
                    : fromSana(file, yaml, catalog, notes);
        } else if (name.endsWith(".toml")) {
            spec = TrainerConfigs.kohya(file, TrainerConfigs.toml(file), file.toAbsolutePath().getParent(), null, catalog,
                    notes);
        } else if (name.endsWith(".json")) {
            Map<String, Object> json = SimpleTunerConfig.read(file);
            if (!OneTrainerConfig.is(json) && !SimpleTunerConfig.is(json)) {
                throw new ConfigException(file, 0, "a JSON config trainwatch reads is SimpleTuner's config.json (with"
                        + " model_family) or OneTrainer's (with model_type and training_method)");
            }
            spec = OneTrainerConfig.is(json) ? OneTrainerConfig.spec(file, json, catalog, notes)
                    : SimpleTunerConfig.spec(file, json, catalog, notes);
        } else {
            throw new ConfigException(file, 0, "not a config trainwatch reads (expected a PixArt or Open-Sora .py, a"
                    + " Sana or ai-toolkit .yaml, a kohya sd-scripts or musubi-tuner .toml, or a SimpleTuner or"
                    + " OneTrainer .json)");
        }
        return new Read(spec, List.copyOf(notes));
    }

    // ------------------------------------------------------------------------------------------ PixArt (.py)

    /** Values with the line they came from, so a bad value can be reported where it is. */
    record Located(Object value, Path file, int line) {
    }

    private static Map<String, Located> loadPython(Path file, Set<Path> seen) {
        return inherit(file, seen, f -> PythonConfigParser.parse(f, readText(f)),
                base -> asList(base.value()).stream().map(entry -> {
                    if (!(entry instanceof String relative)) {
                        throw new ConfigException(base.file(), base.line(), "_base_ must name files as strings");
                    }
                    return relative;
                }).toList(), ConfigReaders::mergeLocated);
    }

    /** {@code file}'s settings over those of the {@code _base_} files it names, merged as mmcv merges them. */
    private static <V> Map<String, V> inherit(Path file, Set<Path> seen, Function<Path, Map<String, V>> read,
            Function<V, List<String>> baseFiles, BinaryOperator<V> merge) {
        Path real = file.toAbsolutePath().normalize();
        if (!seen.add(real)) {
            throw new ConfigException(file, 0, "_base_ inheritance loops back to this file");
        }
        Map<String, V> own = read.apply(file);
        Map<String, V> merged = new LinkedHashMap<>();
        V base = own.remove("_base_");
        if (base != null) {
            for (String relative : baseFiles.apply(base)) {
                inherit(real.getParent().resolve(relative).normalize(), seen, read, baseFiles, merge)
                        .forEach((key, value) -> merged.merge(key, value, merge));
            }
        }
        own.forEach((key, value) -> merged.merge(key, value, merge));
        seen.remove(real);
        return merged;
    }

    /** mmcv merges dicts key by key (unless the child says {@code _delete_=True}); anything else is replaced. */
    private static Located mergeLocated(Located base, Located child) {
        return new Located(mergeValues(base.value(), child.value()), child.file(), child.line());
    }

    @SuppressWarnings("unchecked")
    private static Object mergeValues(Object base, Object child) {
        if (base instanceof Map<?, ?> b && child instanceof Map<?, ?> c && !Boolean.TRUE.equals(c.get("_delete_"))) {
            Map<String, Object> merged = new LinkedHashMap<>((Map<String, Object>) b);
            ((Map<String, Object>) c).forEach((k, v) -> merged.merge(k, v, ConfigReaders::mergeValues));
            return merged;
        }
        return child;
    }

    private static RunSpec fromPixArt(Path file, Map<String, Located> config, Catalog catalog, List<String> notes) {
        Located model = config.get("model");
        String modelId = null;
        if (model != null) {
            String name = string(model, "model");
            Located maxLength = config.get("model_max_length");
            long tokens = maxLength == null ? 120 : integer(maxLength, "model_max_length");
            modelId = pixartModel(name, tokens, catalog, model);
        }
        Integer resolution = intOrNull(config.get("image_size"), "image_size");
        Integer batch = intOrNull(config.get("train_batch_size"), "train_batch_size");
        Located mixed = config.get("mixed_precision");
        String precision = mixed == null || mixed.value() == null ? null
                : precisionName(mixed.file(), mixed.line(), string(mixed, "mixed_precision"));
        Boolean checkpointing = boolOrNull(config.get("grad_checkpointing"), "grad_checkpointing");
        Integer accumulation = intOrNull(config.get("gradient_accumulation_steps"), "gradient_accumulation_steps");
        String optimizer = null;
        Located opt = config.get("optimizer");
        if (opt != null) {
            Located type = field(opt, "type");
            if (type == null) {
                throw new ConfigException(opt.file(), opt.line(), "optimizer has no type");
            }
            optimizer = optimizerName(type.file(), type.line(), string(type, "optimizer type"));
        }
        boolean alpha = modelId != null && catalog.model(modelId).map(m -> m.textTokens() < 300).orElse(false);
        Located data = config.get("data");
        Boolean vae = data == null ? null : boolOrNull(field(data, "load_vae_feat"), "data.load_vae_feat");
        Boolean t5 = data == null ? null : boolOrNull(field(data, "load_t5_feat"), "data.load_t5_feat");
        String textFeatures;
        Boolean ema;
        if (alpha) {
            // PixArt-alpha's train_scripts/train.py never loads T5: y and y_mask come from the .npz features in the
            // batch. Only data.load_vae_feat decides whether the VAE runs. It always keeps model_ema = deepcopy(model).
            textFeatures = "precomputed";
            ema = true;
            if (t5 != null) {
                notes.add("data.load_t5_feat is not read by PixArt-alpha's train.py (T5 features always come from .npz files)");
            }
        } else {
            // PixArt-Sigma's train.py loads T5 unless data.load_t5_feat, the VAE unless data.load_vae_feat; no EMA.
            textFeatures = Boolean.TRUE.equals(t5) ? "precomputed" : "online";
            ema = false;
        }
        String vaeFeatures = Boolean.TRUE.equals(vae) ? "precomputed" : "online";
        if (vae == null) {
            notes.add("data.load_vae_feat is not set: the training script then runs the VAE every step");
        }
        Integer zero = Boolean.TRUE.equals(boolOrNull(config.get("use_fsdp"), "use_fsdp")) ? 3 : null;
        // train.py builds the model with use_fp32_attention=config.get('fp32_attention', False): unset is False.
        Boolean upcast = boolOrNull(config.get("fp32_attention"), "fp32_attention");
        String attentionPrecision = Boolean.TRUE.equals(upcast) ? "fp32"
                : upcast != null || config.containsKey("model") ? "half" : null;
        if (Boolean.TRUE.equals(boolOrNull(config.get("multi_scale"), "multi_scale"))) {
            notes.add("multi_scale=True trains on aspect-ratio buckets of about image_size^2 pixels: priced as the square image_size");
        }
        Located kv = config.get("kv_compress");
        if (kv != null && Boolean.TRUE.equals(kv.value())) {
            notes.add("kv_compress shortens self-attention keys and values: not priced (attention is priced uncompressed)");
        }
        String features = textFeatures.equals(vaeFeatures) ? textFeatures : "online";
        return new RunSpec(modelId, null, null, batch, resolution, null, null, null, precision, optimizer,
                checkpointing, ema, features, zero, null, accumulation, null)
                .withRegime(textFeatures, vaeFeatures, null, null, null, null)
                .withPhysics(null, attentionPrecision, null, null, null, null);
    }

    /** PixArt-alpha and -Sigma share class names; Sigma's recipes use 300 T5 tokens, alpha's 120. */
    private static String pixartModel(String name, long textTokens, Catalog catalog, Located where) {
        List<ModelInfo> candidates = catalog.modelsForConfigName(name);
        if (candidates.isEmpty()) {
            throw new ConfigException(where.file(), where.line(), "model '" + name + "' is not in the catalog (see 'trainwatch models')");
        }
        return candidates.stream()
                .filter(m -> m.family().equals("pixart") && (m.textTokens() >= 300) == (textTokens >= 300))
                .findFirst().orElse(candidates.get(0)).id();
    }

    // ------------------------------------------------------------------------------------------ Sana (.yaml)

    private static Map<String, Object> loadYaml(Path file, Set<Path> seen) {
        return inherit(file, seen, f -> {
            Object root = tree(YAML, f, "YAML");
            if (root != null && !(root instanceof Map<?, ?>)) {
                throw new ConfigException(f, 1, "expected a YAML mapping at the top level");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> own = root == null ? new LinkedHashMap<>() : (Map<String, Object>) root;
            return own;
        }, base -> asList(base).stream().map(String::valueOf).toList(), ConfigReaders::mergeValues);
    }

    private static RunSpec fromSana(Path file, Map<String, Object> config, Catalog catalog, List<String> notes) {
        Map<String, Object> model = TrainerConfigs.map(file, config.get("model"), "model");
        Map<String, Object> train = TrainerConfigs.map(file, config.get("train"), "train");
        Map<String, Object> data = TrainerConfigs.map(file, config.get("data"), "data");
        String modelId = null;
        Object name = model.get("model");
        if (name != null) {
            List<ModelInfo> found = catalog.modelsForConfigName(String.valueOf(name));
            if (found.isEmpty()) {
                throw new ConfigException(file, 0, "model.model '" + name + "' is not in the catalog (see 'trainwatch models')");
            }
            modelId = found.get(0).id();
        }
        Object size = model.get("image_size") != null ? model.get("image_size") : data.get("image_size");
        Integer resolution = TrainerConfigs.whole(file, size, "model.image_size");
        Integer batch = TrainerConfigs.whole(file, train.get("train_batch_size"), "train.train_batch_size");
        Integer accumulation = TrainerConfigs.whole(file, train.get("gradient_accumulation_steps"), "train.gradient_accumulation_steps");
        Object mixed = model.get("mixed_precision");
        String precision = mixed == null ? null : precisionName(file, 0, String.valueOf(mixed));
        Boolean checkpointing = yamlBool(file, train.get("grad_checkpointing"), "train.grad_checkpointing");
        String optimizer = null;
        Object opt = train.get("optimizer");
        if (opt instanceof Map<?, ?> o && o.get("type") != null) {
            optimizer = optimizerName(file, 0, String.valueOf(o.get("type")));
        }
        Boolean text = yamlBool(file, data.get("load_text_feat"), "data.load_text_feat");
        Boolean vae = yamlBool(file, data.get("load_vae_feat"), "data.load_vae_feat");
        String features = text == null && vae == null ? null
                : Boolean.TRUE.equals(text) && Boolean.TRUE.equals(vae) ? "precomputed" : "online";
        Integer zero = Boolean.TRUE.equals(yamlBool(file, train.get("use_fsdp"), "train.use_fsdp")) ? 3 : null;
        if (Boolean.TRUE.equals(model.get("multi_scale"))) {
            notes.add("model.multi_scale trains on aspect-ratio buckets of about image_size^2 pixels: priced as the square image_size");
        }
        // Sana's train.py keeps model_ema = deepcopy(model) only when train.ema_update is set (later versions; the
        // earlier ones have no EMA at all).
        Boolean ema = yamlBool(file, train.get("ema_update"), "train.ema_update");
        RunSpec spec = new RunSpec(modelId, null, null, batch, resolution, null, null, null, precision, optimizer,
                checkpointing, ema, features, zero, null, accumulation, null);
        if (text != null && vae != null && !text.equals(vae)) {
            spec = spec.withRegime(text ? "precomputed" : "online", vae ? "precomputed" : "online", null, null, null, null);
        }
        // Sana's train.py: use_fp32_attention=config.model.get("fp32_attention", False).
        Boolean upcast = yamlBool(file, model.get("fp32_attention"), "model.fp32_attention");
        if (upcast != null || name != null) {
            spec = spec.withPhysics(null, Boolean.TRUE.equals(upcast) ? "fp32" : "half", null, null, null, null);
        }
        return spec;
    }

    private static Boolean yamlBool(Path file, Object value, String key) {
        if (value == null) {
            return null;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        throw new ConfigException(file, 0, key + " should be true or false, got '" + value + "'");
    }

    // ------------------------------------------------------------------------------------------ shared

    private static String readText(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new ConfigException(file, 0, ConfigException.unreadable(e));
        }
    }

    /** A YAML, TOML or JSON file's tree; a syntax error is one line with the line it is on. */
    static Object tree(ObjectMapper mapper, Path file, String format) {
        try {
            return mapper.readValue(readText(file), Object.class);
        } catch (JacksonException e) {
            String why = Errors.firstLine(e.getOriginalMessage(), "");
            throw new ConfigException(file, e.getLocation() == null ? 0 : e.getLocation().getLineNr(),
                    "not valid " + format + ": " + why);
        }
    }

    private static List<?> asList(Object value) {
        return value instanceof List<?> list ? list : Collections.singletonList(value);
    }

    static Located field(Located dict, String key) {
        if (dict.value() instanceof Map<?, ?> map) {
            return map.containsKey(key) ? new Located(map.get(key), dict.file(), dict.line()) : null;
        }
        throw new ConfigException(dict.file(), dict.line(), "expected dict(...) here");
    }

    static String string(Located v, String key) {
        if (v.value() instanceof String s) {
            return s;
        }
        throw new ConfigException(v.file(), v.line(), key + " should be a string, got " + describe(v.value()));
    }

    static long integer(Located v, String key) {
        if (v.value() instanceof Long l) {
            return l;
        }
        if (v.value() instanceof Double d && d == Math.rint(d)) {
            return d.longValue();
        }
        throw new ConfigException(v.file(), v.line(), key + " should be a whole number, got " + describe(v.value()));
    }

    static Integer intOrNull(Located v, String key) {
        if (v == null || v.value() == null) {
            return null;
        }
        return Math.toIntExact(integer(v, key));
    }

    static Boolean boolOrNull(Located v, String key) {
        if (v == null || v.value() == null) {
            return null;
        }
        if (v.value() instanceof Boolean b) {
            return b;
        }
        throw new ConfigException(v.file(), v.line(), key + " should be True or False, got " + describe(v.value()));
    }

    static String precisionName(Path file, int line, String value) {
        String p = value.strip().toLowerCase(Locale.ROOT);
        return switch (p) {
            case "fp16", "bf16", "tf32" -> p;
            case "fp32", "no" -> "fp32";
            default -> throw new ConfigException(file, line, "mixed_precision '" + value + "' is not fp16, bf16, fp32 or no");
        };
    }

    static String optimizerName(Path file, int line, String type) {
        String o = type.strip().toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
        String name = switch (o) {
            case "adamw", "adam", "fusedadam", "fusedadamw" -> "adamw";
            case "adamw8bit", "adam8bit", "bnbadamw8bit" -> "adamw8bit";
            case "camewrapper", "came" -> "came";
            case "came8bitwrapper", "came8bit" -> "came8bit";
            case "adafactor", "sgd", "prodigy", "lion", "lion8bit" -> o;
            default -> null;
        };
        if (name == null) {
            throw new ConfigException(file, line, "optimizer type '" + type + "' is not one trainwatch can price (AdamW,"
                    + " AdamW8bit, CAMEWrapper, CAME8BitWrapper, Adafactor, SGD, Prodigy, Lion, Lion8bit)");
        }
        return name;
    }

    static String describe(Object value) {
        if (value instanceof PythonConfigParser.Opaque o) {
            return o.why() + " (trainwatch reads literal values only)";
        }
        return value == null ? "None" : "'" + value + "'";
    }
}
