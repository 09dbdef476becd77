package dev.trainwatch.estimator.config;

import static dev.trainwatch.estimator.config.TrainerConfigs.BLOCK_LINEARS;
import static dev.trainwatch.estimator.config.TrainerConfigs.bool;
import static dev.trainwatch.estimator.config.TrainerConfigs.largestSide;
import static dev.trainwatch.estimator.config.TrainerConfigs.longOrNull;
import static dev.trainwatch.estimator.config.TrainerConfigs.optimizer;
import static dev.trainwatch.estimator.config.TrainerConfigs.precision;
import static dev.trainwatch.estimator.config.TrainerConfigs.text;
import static dev.trainwatch.estimator.config.TrainerConfigs.truthy;
import static dev.trainwatch.estimator.config.TrainerConfigs.whole;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * SimpleTuner's {@code config.json} (its command-line flags as keys, with or without the leading {@code --}) and the
 * {@code multidatabackend.json} its {@code data_backend_config} names. SimpleTuner always trains from its VAE and
 * text-embedding caches, so features are precomputed. Stateless.
 */
final class SimpleTunerConfig {

    private static final ObjectMapper JSON = new ObjectMapper();

    private SimpleTunerConfig() {
    }

    /** True for a SimpleTuner config ({@code model_family} among its keys). */
    static boolean is(Map<String, Object> json) {
        return keys(json).containsKey("model_family");
    }

    static Map<String, Object> read(Path file) {
        Object root = ConfigReaders.tree(JSON, file, "JSON");
        if (root instanceof Map<?, ?>) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) root;
            return map;
        }
        if (root instanceof List<?>) {
            return Map.of("", root);
        }
        throw new ConfigException(file, 1, "expected a JSON object at the top level");
    }

    static RunSpec spec(Path file, Map<String, Object> json, Catalog catalog, List<String> notes) {
        Map<String, Object> c = keys(json);
        String family = text(c.get("model_family"));
        String modelId = TrainerConfigs.modelId(file, catalog, text(c.get("pretrained_model_name_or_path")),
                family == null ? null : switch (family.toLowerCase(Locale.ROOT)) {
                    case "wan" -> "wan14";
                    case "ltxvideo" -> "ltx";
                    default -> family;
                });
        boolean lora = "lora".equals(text(c.get("model_type")));
        // int8-quanto, int4-quanto, nf4-bnb, fp8-torchao, ...; no_change: the base stays in the compute dtype.
        String precision = lora ? text(c.get("base_model_precision")) : null;
        String base = precision == null || precision.equalsIgnoreCase("no_change") ? null
                : TrainerConfigs.quantType(precision);
        Integer rank = lora ? whole(file, c.get("lora_rank"), "lora_rank") : null;
        Integer resolution = largestSide(file, c.get("resolution"));
        Object backends = c.get("data_backend_config");
        if (backends != null) {
            Integer fromData = datasetResolution(file, String.valueOf(backends), notes);
            resolution = fromData != null ? fromData : resolution;
        }
        if (c.get("validation_resolution") != null) {
            notes.add("validation_resolution " + c.get("validation_resolution") + ": the sampling peak is priced at the"
                    + " training size");
        }
        return new RunSpec(modelId, null, null, whole(file, c.get("train_batch_size"), "train_batch_size"), resolution,
                null, null, null, precision(text(c.get("mixed_precision"))), optimizer(text(c.get("optimizer"))),
                bool(c.get("gradient_checkpointing")), bool(c.get("use_ema")), "precomputed", null, null,
                whole(file, c.get("gradient_accumulation_steps"), "gradient_accumulation_steps"),
                longOrNull(c.get("max_train_steps")))
                .withPhysics(null, null, rank, rank == null ? null : BLOCK_LINEARS, null, null)
                .withTrainer(base, null)
                .withSampling(truthy(c.get("validation_disable")) ? null
                        : TrainerConfigs.sampleEvery(file, c.get("validation_steps"), "validation_steps", null, null, notes));
    }

    /** The largest image side of the first image dataset ({@code resolution_type} pixel, or area in megapixels). */
    private static Integer datasetResolution(Path file, String backends, List<String> notes) {
        Path path = file.toAbsolutePath().getParent().resolve(backends).normalize();
        if (!Files.isRegularFile(path)) {
            notes.add("data_backend_config " + backends + " not found: resolution from the config's flags only");
            return null;
        }
        Object list = read(path).get("");
        if (list instanceof List<?> entries) {
            for (Object entry : entries) {
                if (entry instanceof Map<?, ?> m && !"text_embeds".equals(m.get("dataset_type"))
                        && m.get("resolution") instanceof Number r) {
                    boolean area = "area".equals(m.get("resolution_type"));
                    return area ? (int) Math.round(Math.sqrt(r.doubleValue() * 1e6)) : r.intValue();
                }
            }
        }
        return null;
    }

    /** The config's keys without the leading dashes some SimpleTuner versions write. */
    private static Map<String, Object> keys(Map<String, Object> json) {
        Map<String, Object> out = new LinkedHashMap<>();
        json.forEach((k, v) -> out.put(k.replaceFirst("^--", ""), v));
        return out;
    }
}
