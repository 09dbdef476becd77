package dev.trainwatch.estimator.config;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.estimator.config.ConfigReaders.Located;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Open-Sora 1.x and 2.0 training configs ({@code model = dict(type=...)}), resolved to what {@code scripts/train.py}
 * does: ColossalAI's booster keeps half parameters with fp32 master weights in the optimizer, sharded by the
 * plugin's ZeRO stage over the data-parallel ranks; the batch comes from {@code bucket_config}; T5 and the video VAE
 * run every step. Stateless.
 */
final class OpenSoraReader {

    private OpenSoraReader() {
    }

    /** Open-Sora 1.2's named resolutions (opensora/datasets/aspect.py): height x width at 16:9, or square. */
    private static final Map<String, int[]> NAMED = Map.ofEntries(
            Map.entry("144p", new int[] {144, 256}), Map.entry("240p", new int[] {240, 426}),
            Map.entry("256", new int[] {256, 256}), Map.entry("360p", new int[] {360, 640}),
            Map.entry("512", new int[] {512, 512}), Map.entry("480p", new int[] {480, 854}),
            Map.entry("720p", new int[] {720, 1280}), Map.entry("1024", new int[] {1024, 1024}),
            Map.entry("1080p", new int[] {1080, 1920}), Map.entry("2048", new int[] {2048, 2048}));

    static RunSpec read(Map<String, Located> config, Catalog catalog, List<String> notes) {
        Located model = config.get("model");
        Located type = ConfigReaders.field(model, "type");
        if (type == null) {
            throw new ConfigException(model.file(), model.line(), "model = dict(...) has no type");
        }
        String typeName = ConfigReaders.string(type, "model type");
        List<ModelInfo> found = catalog.modelsForConfigName(typeName);
        if (found.isEmpty()) {
            throw new ConfigException(type.file(), type.line(), "model type '" + typeName
                    + "' is not in the catalog (see 'trainwatch models')");
        }
        ModelInfo info = found.get(0);
        int grid = info.pixelsPerToken();

        String precision = null;
        Located dtype = config.get("dtype");
        if (dtype != null && dtype.value() != null) {
            precision = ConfigReaders.precisionName(dtype.file(), dtype.line(), ConfigReaders.string(dtype, "dtype"));
        }
        // The booster's mixed-precision optimizer: half parameters and gradients, fp32 master weights.
        String weights = precision == null || precision.equals("fp16") || precision.equals("bf16") ? "mixed" : "fp32";
        Integer zero = plugin(config, notes);

        Boolean checkpointing = ConfigReaders.boolOrNull(config.get("grad_checkpoint"), "grad_checkpoint");
        List<Integer> checkpointBlocks = checkpointBlocks(config, model, checkpointing, info, notes);
        if (checkpointBlocks != null) {
            checkpointing = true;
        }

        Integer batch = ConfigReaders.intOrNull(config.get("batch_size"), "batch_size");
        List<RunSpec.Bucket> buckets = buckets(config.get("bucket_config"), grid, batch, notes);

        Located ema = config.get("ema_decay");
        Boolean keepEma = ema == null ? null : ema.value() != null;

        String optimizer = optimizer(config);
        Integer accumulation = ConfigReaders.intOrNull(config.get("accumulation_steps"), "accumulation_steps");

        Integer vaeMicroBatch = vaeMicroBatch(config, notes);
        textEncoderNotes(config, info, notes);
        if (config.containsKey("clip")) {
            notes.add("the CLIP text encoder next to T5 is not priced (about 0.1 B parameters)");
        }
        // Open-Sora's blocks call flash-attn when enable_flash_attn, else the naive attention that materialises
        // its scores; they run attention in the training dtype (Open-Sora's PixArt has no fp32 upcast either).
        Located flash = ConfigReaders.field(model, "enable_flash_attn");
        String attention = flash != null && Boolean.FALSE.equals(flash.value()) ? "math" : "flash";
        Located layernorm = ConfigReaders.field(model, "enable_layernorm_kernel");
        if (layernorm != null && Boolean.TRUE.equals(layernorm.value())) {
            notes.add("enable_layernorm_kernel fuses the layer norms (apex): priced as eager PyTorch kernels");
        }
        return new RunSpec(info.id(), null, null, batch, null, null, null, null, precision, optimizer, checkpointing,
                keepEma, "online", zero, attention, accumulation, null)
                .withRegime(null, null, weights, checkpointBlocks, vaeMicroBatch, buckets)
                .withPhysics(null, "half", null, null, null, null);
    }

    /** grad_ckpt_settings (double-stream blocks, single-stream blocks), or null when the config has none. */
    private static List<Integer> checkpointBlocks(Map<String, Located> config, Located model, Boolean checkpointing,
            ModelInfo info, List<String> notes) {
        Located settings = ConfigReaders.field(model, "grad_ckpt_settings");
        if (settings == null) {
            settings = config.get("grad_ckpt_settings");
        }
        if (settings != null && settings.value() != null && !Boolean.FALSE.equals(checkpointing)) {
            if (!(settings.value() instanceof List<?> pair) || pair.isEmpty()) {
                throw new ConfigException(settings.file(), settings.line(),
                        "grad_ckpt_settings should be (double-stream blocks, single-stream blocks), got "
                                + ConfigReaders.describe(settings.value()));
            }
            List<Integer> checkpointBlocks = new ArrayList<>();
            for (Object n : pair) {
                checkpointBlocks.add(Math.toIntExact(ConfigReaders.integer(new Located(n, settings.file(), settings.line()),
                        "grad_ckpt_settings")));
            }
            // forward_selective_ckpt checkpoints double_blocks[:n] and single_blocks[:m]: the first blocks of each kind.
            notes.add("grad_ckpt_settings " + checkpointBlocks + ": the first " + checkpointBlocks.get(0)
                    + " double-stream blocks" + (checkpointBlocks.size() > 1 ? " and the first " + checkpointBlocks.get(1)
                    + " single-stream blocks (at most " + info.singleDepth() + ")" : "") + " are recomputed");
            return checkpointBlocks;
        }
        return null;
    }

    /** The optimizer the config builds (optim.cls, or Open-Sora 1.x's HybridAdam from lr), or null. */
    private static String optimizer(Map<String, Located> config) {
        Located optim = config.get("optim");
        if (optim == null || !(optim.value() instanceof Map<?, ?>)) {
            // Open-Sora 1.x builds HybridAdam(adamw_mode=True) from lr, weight_decay, adam_eps.
            return config.containsKey("lr") ? "adamw" : null;
        }
        Located cls = ConfigReaders.field(optim, "cls");
        String name = cls == null ? null : ConfigReaders.string(cls, "optim.cls");
        // ColossalAI's HybridAdam with adamw_mode is AdamW (CPU/GPU fused); states as AdamW's.
        return name == null ? null : ConfigReaders.optimizerName(cls.file(), cls.line(),
                name.equalsIgnoreCase("HybridAdam") ? "AdamW" : name);
    }

    /** The VAE's micro batch, with notes on what of the VAE's settings is not priced. */
    private static Integer vaeMicroBatch(Map<String, Located> config, List<String> notes) {
        Integer vaeMicroBatch = null;
        Located vae = config.containsKey("vae") ? config.get("vae") : config.get("ae");
        if (vae != null && vae.value() instanceof Map<?, ?>) {
            Located micro = ConfigReaders.field(vae, "micro_batch_size");
            if (micro == null && ConfigReaders.field(vae, "vae_2d") != null) {
                micro = ConfigReaders.field(ConfigReaders.field(vae, "vae_2d"), "micro_batch_size");
            }
            vaeMicroBatch = ConfigReaders.intOrNull(micro, "vae.micro_batch_size");
            Located frames = ConfigReaders.field(vae, "micro_frame_size");
            if (frames != null && frames.value() != null) {
                notes.add("vae micro_frame_size " + frames.value()
                        + ": the temporal VAE's frame chunks are not priced separately (its working memory is per frame)");
            }
            Located tiling = ConfigReaders.field(vae, "use_spatial_tiling");
            if (tiling != null && Boolean.TRUE.equals(tiling.value())) {
                notes.add("the VAE encodes in spatial tiles: its working memory is priced per frame, which tiling only lowers");
            }
        }
        return vaeMicroBatch;
    }

    /** A note when the text encoder's length differs from the catalog's. */
    private static void textEncoderNotes(Map<String, Located> config, ModelInfo info, List<String> notes) {
        Located text = config.containsKey("text_encoder") ? config.get("text_encoder") : config.get("t5");
        if (text != null && text.value() instanceof Map<?, ?>) {
            Located length = ConfigReaders.field(text, "model_max_length");
            if (length == null) {
                length = ConfigReaders.field(text, "max_length");
            }
            if (length != null && length.value() != null && ConfigReaders.integer(length, "max_length") != info.textTokens()) {
                notes.add("text encoder max length " + length.value() + " is priced as the catalog's " + info.textTokens()
                        + " tokens");
            }
        }
    }


    private static Integer plugin(Map<String, Located> config, List<String> notes) {
        Located plugin = config.get("plugin");
        if (plugin == null || plugin.value() == null) {
            return null;
        }
        String name = ConfigReaders.string(plugin, "plugin").toLowerCase(Locale.ROOT);
        if (name.equals("zero2-seq")) {
            notes.add("plugin zero2-seq splits each sequence over sp_size GPUs: priced as plain ZeRO-2 data parallelism");
        }
        return switch (name) {
            case "zero1" -> 1;
            case "zero2", "zero2-seq" -> 2;
            case "ddp" -> 0;
            case "hybrid" -> hybridStage(config.get("plugin_config"), notes);
            default -> {
                notes.add("plugin '" + name + "' is not one trainwatch maps (zero1, zero2, ddp, hybrid): ZeRO stage left to --zero");
                yield null;
            }
        };
    }

    /** The hybrid plugin's ZeRO stage, with a note for each kind of parallelism the estimate does not price. */
    private static Integer hybridStage(Located pc, List<String> notes) {
        if (pc == null || !(pc.value() instanceof Map<?, ?>)) {
            return null;
        }
        Integer stage = ConfigReaders.intOrNull(ConfigReaders.field(pc, "zero_stage"), "plugin_config.zero_stage");
        for (String parallel : List.of("tp_size", "sp_size", "pp_size")) {
            Located n = ConfigReaders.field(pc, parallel);
            if (n != null && n.value() != null && ConfigReaders.integer(n, parallel) > 1) {
                notes.add("plugin_config." + parallel + "=" + n.value()
                        + " is not priced: the estimate treats every GPU as a data-parallel rank");
            }
        }
        return stage;
    }

    /**
     * {@code bucket_config = {resolution: {frames: (probability, batch)}}}; {@code (0.0, None)} or a None batch is an
     * unused bucket. The probability can be a (keep, drop-frames) pair; its first number is used as the bucket's share.
     */
    private static List<RunSpec.Bucket> buckets(Located config, int grid, Integer batch, List<String> notes) {
        if (config == null || config.value() == null) {
            return null;
        }
        if (!(config.value() instanceof Map<?, ?> resolutions)) {
            throw new ConfigException(config.file(), config.line(), "bucket_config should be a dict, got "
                    + ConfigReaders.describe(config.value()));
        }
        List<RunSpec.Bucket> out = new ArrayList<>();
        boolean rounded = false;
        for (Map.Entry<?, ?> entry : resolutions.entrySet()) {
            String key = String.valueOf(entry.getKey());
            if (key.equals("_delete_")) {
                continue;
            }
            int[] size = size(key);
            if (size == null) {
                notes.add("bucket resolution '" + key + "' is not one trainwatch knows: skipped");
                continue;
            }
            // Open-Sora resizes each video to its bucket's area at the clip's aspect ratio; price the square of that
            // area on the token grid.
            int side = (int) Math.max(grid, Math.round(Math.sqrt((double) size[0] * size[1]) / grid) * grid);
            rounded |= side != size[0] || side != size[1];
            if (!(entry.getValue() instanceof Map<?, ?> frames)) {
                throw new ConfigException(config.file(), config.line(), "bucket_config['" + key + "'] should be a dict");
            }
            for (Map.Entry<?, ?> f : frames.entrySet()) {
                Integer frameCount = frameCount(f.getKey());
                if (frameCount == null || !(f.getValue() instanceof List<?> pair) || pair.size() != 2) {
                    throw new ConfigException(config.file(), config.line(), "bucket_config['" + key
                            + "'] should map frames to (probability, batch)");
                }
                Object probability = pair.get(0) instanceof List<?> p && !p.isEmpty() ? p.get(0) : pair.get(0);
                Object size2 = pair.get(1);
                if (!(probability instanceof Number prob) || prob.doubleValue() <= 0 || size2 == null) {
                    continue;
                }
                Integer b = size2 instanceof Number s ? Integer.valueOf(s.intValue()) : batch;
                out.add(new RunSpec.Bucket(side, side, frameCount, b, prob.doubleValue()));
            }
        }
        if (out.isEmpty()) {
            notes.add("bucket_config has no bucket in use: priced at the flags' resolution, frames and batch");
            return null;
        }
        notes.add("bucket_config: " + out.size() + " frames x resolution buckets, each at its own batch; the step time is "
                + "weighted by each bucket's probability (the data set's mix is not in the config)"
                + (rounded ? "; a 16:9 bucket is priced as the square of its area" : ""));
        if (out.size() > 64) {
            throw new ConfigException(config.file(), config.line(), "bucket_config has " + out.size()
                    + " buckets in use; trainwatch prices at most 64");
        }
        return out;
    }

    private static Integer frameCount(Object key) {
        if (key instanceof Number n) {
            return n.intValue();
        }
        try {
            return Integer.valueOf(String.valueOf(key).strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static int[] size(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        if (NAMED.containsKey(k)) {
            return NAMED.get(k);
        }
        // Open-Sora 2.0: "256px", "768px", "1024px" are squares.
        if (k.endsWith("px")) {
            try {
                int side = Integer.parseInt(k.substring(0, k.length() - 2));
                return new int[] {side, side};
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }
}
