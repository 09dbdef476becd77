package dev.trainwatch.estimator.config;

import static dev.trainwatch.estimator.config.TrainerConfigs.BLOCK_LINEARS;
import static dev.trainwatch.estimator.config.TrainerConfigs.largestSide;
import static dev.trainwatch.estimator.config.TrainerConfigs.optimizer;
import static dev.trainwatch.estimator.config.TrainerConfigs.precision;
import static dev.trainwatch.estimator.config.TrainerConfigs.text;
import static dev.trainwatch.estimator.config.TrainerConfigs.whole;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * OneTrainer's training config JSON ({@code scripts/train.py --config-path}, the GUI's presets): keys it leaves out
 * take OneTrainer's TrainConfig defaults (batch 1, latents and text cached, checkpointing on, LoRA rank 16).
 * Both layouts are read: the older top-level {@code gradient_checkpointing} ({@code ON}/{@code OFF}/
 * {@code CPU_OFFLOADED}) with {@code layer_offload_fraction}, and the newer per-part ones.
 */
final class OneTrainerConfig {

    private OneTrainerConfig() {
    }

    static boolean is(Map<String, Object> json) {
        return json.get("model_type") instanceof String && json.containsKey("training_method");
    }

    static RunSpec spec(Path file, Map<String, Object> c, Catalog catalog, List<String> notes) {
        String method = String.valueOf(c.get("training_method")).toUpperCase(Locale.ROOT);
        String modelId = TrainerConfigs.modelId(file, catalog, text(c.get("base_model_name")), arch(text(c.get("model_type"))));
        @SuppressWarnings("unchecked")
        Map<String, Object> transformer = c.get("transformer") instanceof Map<?, ?> m ? (Map<String, Object>) m
                : Map.of();
        boolean lora = method.equals("LORA");
        if (!lora && !method.equals("FINE_TUNE")) {
            notes.add("training_method " + method + " is priced as a full fine-tune");
        }
        Integer rank = lora ? (c.get("lora_rank") == null ? 16 : whole(file, c.get("lora_rank"), "lora_rank")) : null;
        Object dtype = transformer.get("weight_dtype") != null ? transformer.get("weight_dtype") : c.get("weight_dtype");
        String base = lora ? baseWeights(text(dtype)) : null;
        Object checkpointing = c.get("gradient_checkpointing") != null ? c.get("gradient_checkpointing")
                : transformer.get("gradient_checkpointing");
        Object fraction = transformer.get("offload_fraction") != null ? transformer.get("offload_fraction")
                : c.get("layer_offload_fraction");
        boolean cached = !Boolean.FALSE.equals(c.get("latent_caching")) && !Boolean.FALSE.equals(c.get("image_caching"));
        boolean textCached = !Boolean.FALSE.equals(c.get("latent_caching")) && !Boolean.FALSE.equals(c.get("text_caching"));
        Object opt = c.get("optimizer") instanceof Map<?, ?> o ? o.get("optimizer") : c.get("optimizer");
        Object ema = c.get("ema");
        RunSpec spec = new RunSpec(modelId, null, null, c.get("batch_size") == null ? 1 : whole(file, c.get("batch_size"), "batch_size"),
                largestSide(file, c.get("resolution")), null, null, frames(file, c.get("frames"), catalog, modelId),
                precision(text(c.get("train_dtype") == null ? "FLOAT_16" : c.get("train_dtype")).replace("_", "")),
                optimizer(opt == null ? "ADAMW" : String.valueOf(opt)),
                checkpointing == null || !"OFF".equals(String.valueOf(checkpointing)) && !Boolean.FALSE.equals(checkpointing),
                ema != null && !"OFF".equals(String.valueOf(ema)), null, null, null,
                c.get("gradient_accumulation_steps") == null ? 1
                        : whole(file, c.get("gradient_accumulation_steps"), "gradient_accumulation_steps"), null)
                .withRegime(textCached ? "precomputed" : "online", cached ? "precomputed" : "online", null, null, null, null)
                .withPhysics(null, null, rank, rank == null ? null : BLOCK_LINEARS, null, null);
        String unit = text(c.get("sample_after_unit"));
        return spec.withTrainer(base, blocks(fraction, catalog, modelId, notes)).withSampling("STEP".equals(unit)
                ? TrainerConfigs.sampleEvery(file, c.get("sample_after"), "sample_after", null, null, notes) : null);
    }

    /** A layer offload fraction as the whole blocks it streams from host memory. */
    private static Integer blocks(Object fraction, Catalog catalog, String modelId, List<String> notes) {
        if (!(fraction instanceof Number f) || f.doubleValue() <= 0) {
            return null;
        }
        ModelInfo m = catalog.model(modelId).orElseThrow();
        int all = m.depth() + m.singleDepth();
        int swapped = (int) Math.round(f.doubleValue() * all);
        notes.add("layer offload fraction " + f + ": priced as " + swapped + " of " + all + " blocks swapped");
        return swapped;
    }

    private static Integer frames(Path file, Object frames, Catalog catalog, String modelId) {
        boolean video = catalog.model(modelId).map(m -> m.temporalDownsample() > 1).orElse(false);
        return video && frames != null ? largestSide(file, frames) : null;
    }

    private static String arch(String modelType) {
        String t = modelType == null ? "" : modelType.toUpperCase(Locale.ROOT);
        return t.startsWith("FLUX_DEV") || t.startsWith("FLUX_FILL") ? "flux" : t.startsWith("STABLE_DIFFUSION_3") ? "sd3"
                : t.startsWith("HUNYUAN_VIDEO") ? "hunyuan" : t.startsWith("QWEN") ? "qwen" : t.startsWith("Z_IMAGE") ? "zimage"
                : t.startsWith("WAN") ? "wan14" : null;
    }

    /** OneTrainer's DataType names as the estimator's base-weight storages (null: stored in the compute dtype). */
    private static String baseWeights(String dtype) {
        if (dtype == null) {
            return null;
        }
        return switch (dtype.toUpperCase(Locale.ROOT)) {
            case "FLOAT_8", "FLOAT_W8A8", "FLOAT_8_SVD" -> "fp8";
            case "INT_8", "INT_W8A8", "INT_8_SVD" -> "int8";
            case "NFLOAT_4", "NFLOAT_4_SVD" -> "nf4";
            case "BFLOAT_16" -> "bf16";
            case "FLOAT_16" -> "fp16";
            default -> null;
        };
    }
}
