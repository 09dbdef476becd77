package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a {@link RunSpec} into a {@link ResolvedRun}: looks up model, GPU and encoders, fills the recipe defaults and
 * checks every value (one-line {@link InvalidSpecException}). Thread-safe.
 */
final class SpecResolver {

    static final List<String> PRECISIONS = List.of("fp32", "tf32", "fp16", "bf16");
    static final List<String> FEATURES = List.of("online", "precomputed");
    static final List<String> WEIGHTS = List.of("fp32", "mixed", "pure");
    /** flash: FlashAttention-2 / PyTorch SDPA; mem-efficient: xformers' cutlass kernels; math: scores materialised. */
    static final List<String> ATTENTIONS = List.of("flash", "mem-efficient", "math");
    static final List<String> KERNELS = List.of("eager", "compiled");
    static final List<String> ATTENTION_PRECISIONS = List.of("fp32", "half");

    /** Upper bounds keep the arithmetic (and the batch search) far from overflow; no real run comes near them. */
    private static final Map<String, Integer> LIMITS = Map.of("gpus", 1_000_000, "batch", 1_000_000,
            "resolution", 65_536, "height", 65_536, "width", 65_536, "frames", 100_000, "grad_accumulation", 1_000_000);

    private final Catalog catalog;
    private final Map<String, ModelProfile> profiles;
    private final Calibration calibration;

    SpecResolver(Catalog catalog, Map<String, ModelProfile> profiles, Calibration calibration) {
        this.catalog = catalog;
        this.profiles = profiles;
        this.calibration = calibration;
    }

    ModelProfile profile(String modelId) {
        Optional<ModelInfo> model = catalog.model(modelId);
        if (model.isEmpty()) {
            throw new InvalidSpecException("unknown model '" + modelId + "'; nearest: "
                    + String.join(", ", Catalog.nearest(modelId, catalog.modelIds()))
                    + " (see 'trainwatch models'; describe another model in a user catalog with --catalog FILE)");
        }
        return profiles.get(model.get().id());
    }

    ResolvedRun resolve(RunSpec spec) {
        if (spec == null || spec.model() == null || spec.model().isBlank()) {
            throw new InvalidSpecException("no model given; choose one of: " + String.join(", ", catalog.modelIds()));
        }
        ModelProfile profile = profile(spec.model());
        ModelInfo m = profile.info;
        GpuInfo gpu = gpu(spec.gpu());
        ResolvedRun.Builder b = new ResolvedRun.Builder(profile);
        shape(b, spec, m);
        numerics(b, spec, m.defaults(), gpu);
        regime(b, spec, m);
        Trainable trainable = spec.loraRank() == null && spec.loraTargets() == null ? profile.all
                : Trainable.of(profile, spec.loraRank(), spec.loraTargets());
        int accumulation = positive("grad_accumulation", spec.gradAccumulation(), 1);
        Long totalSteps = spec.totalSteps();
        if (totalSteps != null && totalSteps < 1) {
            throw new InvalidSpecException("total_steps must be at least 1, got " + totalSteps);
        }
        if (spec.images() != null || spec.epochs() != null) {
            totalSteps = stepsFor(spec.images(), spec.epochs(), (long) b.batch * b.gpus * accumulation, totalSteps);
        }
        boolean checkpointing = spec.gradCheckpointing() != null ? spec.gradCheckpointing()
                : Boolean.TRUE.equals(m.defaults().gradCheckpointing());
        int[] checkpointed = checkpointBlocks(m, spec.checkpointBlocks(), checkpointing);
        b.gpu = gpu;
        b.arch = catalog.architecture(gpu);
        b.textEncoder = catalog.encoder(m.textEncoder()).orElse(null);
        b.vae = catalog.encoder(m.vae()).orElseThrow();
        b.checkpointing = Arrays.stream(checkpointed).anyMatch(c -> c > 0);
        b.checkpointed = checkpointed;
        b.accumulation = accumulation;
        b.totalSteps = totalSteps;
        b.factors = calibration.factorsFor(gpu.id(), m.family());
        b.trainable = trainable;
        trainerLevers(b, spec, profile, trainable);
        return b.build();
    }

    private GpuInfo gpu(String id) {
        if (id == null || id.isBlank()) {
            throw new InvalidSpecException("no GPU given; choose one of: " + String.join(", ", catalog.gpuIds()));
        }
        List<String> ambiguous = catalog.ambiguousGpuIds(id);
        if (!ambiguous.isEmpty()) {
            // The example is one of these cards' own NVML name (an A100's name for "h100" sent users the wrong way).
            String example = ambiguous.stream().map(catalog::gpu).flatMap(Optional::stream)
                    .flatMap(g -> g.nvmlNames().stream())
                    .findFirst().map(n -> ", e.g. \"" + n + "\"").orElse("");
            throw new InvalidSpecException("GPU '" + id + "' is ambiguous: " + String.join(", ", ambiguous)
                    + " are different cards; name the one you use (or give its NVML name" + example + ")");
        }
        return catalog.gpu(id).orElseThrow(() -> new InvalidSpecException("unknown GPU '"
                + id + "'; nearest: " + String.join(", ", Catalog.nearest(id, catalog.gpuIds()))
                + " (see 'trainwatch gpus')"));
    }

    /** GPUs, batch, image sides (divisible by the model's pixels per token) and frames. */
    private static void shape(ResolvedRun.Builder b, RunSpec spec, ModelInfo m) {
        ModelInfo.Defaults d = m.defaults();
        b.gpus = positive("gpus", spec.gpus(), 1);
        b.batch = positive("batch", spec.batch(), 1);
        int resolution = positive("resolution", spec.resolution(), d.resolution() == null ? 256 : d.resolution());
        b.height = spec.height() != null ? positive("height", spec.height(), 0) : resolution;
        b.width = spec.width() != null ? positive("width", spec.width(), 0) : resolution;
        if ((spec.height() == null) != (spec.width() == null)) {
            throw new InvalidSpecException("give both height and width, or a square resolution");
        }
        int grid = m.pixelsPerToken();
        for (int side : new int[] {b.height, b.width}) {
            if (side % grid != 0) {
                throw new InvalidSpecException(m.id() + " needs image sides divisible by " + grid + " (VAE /"
                        + m.latentDownsample() + " × patch " + m.patch() + "); " + side + " is not");
            }
        }
        if (m.video()) {
            b.frames = positive("frames", spec.frames(), d.frames() == null ? 16 : d.frames());
        } else {
            if (spec.frames() != null && spec.frames() != 1) {
                throw new InvalidSpecException(m.id() + " is an image model; frames apply to video models only");
            }
            b.frames = 1;
        }
        b.squareResolution = spec.height() == null ? resolution : null;
    }

    /** Precision (against what the GPU has) and optimizer. */
    private static void numerics(ResolvedRun.Builder b, RunSpec spec, ModelInfo.Defaults d, GpuInfo gpu) {
        String precision = choice("precision", spec.precision(), d.precision(), PRECISIONS);
        if (spec.precision() == null && precision.equals("tf32") && gpu.tf32Tflops() == null) {
            precision = "fp32"; // the recipe turns TF32 on; a GPU without it (V100) runs plain fp32
        }
        if (precision.equals("bf16") && gpu.bf16Tflops() == null) {
            throw new InvalidSpecException(gpu.id() + " has no bf16 tensor cores; use fp16");
        }
        if (precision.equals("tf32") && gpu.tf32Tflops() == null) {
            throw new InvalidSpecException(gpu.id() + " has no TF32; use fp32 or fp16");
        }
        b.precision = precision;
        String optimizerName = spec.optimizer() != null ? spec.optimizer() : d.optimizer();
        if (optimizerName == null) {
            // A user-catalog model whose defaults name no optimizer: one line, as for the other recipe fields.
            throw new InvalidSpecException("no optimizer given; choose one of " + String.join(", ", OptimizerState.OPTIMIZERS));
        }
        b.optimizer = OptimizerState.normalize(optimizerName);
        if (b.optimizer == null) {
            throw new InvalidSpecException("unknown optimizer '" + optimizerName + "'; choose one of "
                    + String.join(", ", OptimizerState.OPTIMIZERS));
        }
    }

    /** EMA, where features come from, weight storage, VAE micro-batch, ZeRO stage, attention and kernels. */
    private static void regime(ResolvedRun.Builder b, RunSpec spec, ModelInfo m) {
        ModelInfo.Defaults d = m.defaults();
        b.ema = spec.ema() != null ? spec.ema() : Boolean.TRUE.equals(d.ema());
        String features = choice("features", spec.features(), d.features(), FEATURES);
        String textFeatures = spec.textFeatures() == null ? features : choice("text_features", spec.textFeatures(), null, FEATURES);
        String vaeFeatures = spec.vaeFeatures() == null ? features : choice("vae_features", spec.vaeFeatures(), null, FEATURES);
        if (m.textEncoder() == null) {
            textFeatures = vaeFeatures;
        }
        b.features = textFeatures.equals(vaeFeatures) ? textFeatures
                : textFeatures.equals("precomputed") ? ResolvedRun.TEXT_PRECOMPUTED : ResolvedRun.VAE_PRECOMPUTED;
        b.weights = choice("weights", spec.weights(), "fp32", WEIGHTS);
        if (!b.weights.equals("fp32") && !(b.precision.equals("fp16") || b.precision.equals("bf16"))) {
            throw new InvalidSpecException("weights '" + b.weights + "' holds half-precision parameters; it needs precision fp16 or bf16, got " + b.precision);
        }
        if (spec.sampleEvery() != null && spec.sampleEvery() < 1) {
            throw new InvalidSpecException("sample_every must be at least 1 step, got " + spec.sampleEvery());
        }
        b.vaeMicroBatch = spec.vaeMicroBatch();
        if (b.vaeMicroBatch != null && (b.vaeMicroBatch < 1 || b.vaeMicroBatch > 100_000)) {
            throw new InvalidSpecException("vae_micro_batch must be between 1 and 100000, got " + b.vaeMicroBatch);
        }
        b.zero = spec.zero() != null ? spec.zero() : d.zero() == null ? 0 : d.zero();
        if (b.zero < 0 || b.zero > 3) {
            throw new InvalidSpecException("zero must be 0, 1, 2 or 3, got " + b.zero);
        }
        b.attention = choice("attention", spec.attention() != null && spec.attention().strip().equalsIgnoreCase("xformers")
                ? "mem-efficient" : spec.attention(), d.attention(), ATTENTIONS);
        b.kernels = choice("kernels", spec.kernels(), "eager", KERNELS);
        b.attentionFp32 = spec.attentionPrecision() == null ? null
                : choice("attention_precision", spec.attentionPrecision(), null, ATTENTION_PRECISIONS).equals("fp32");
    }

    /** Base-weights storage and block swap: checked against what the run trains and how many blocks the model has. */
    private static void trainerLevers(ResolvedRun.Builder b, RunSpec spec, ModelProfile profile, Trainable trainable) {
        if (spec.baseWeights() != null) {
            String base = TrainerLevers.normalizeBaseWeights(spec.baseWeights());
            if (base == null) {
                throw new InvalidSpecException("unknown base_weights '" + spec.baseWeights() + "'; choose one of "
                        + String.join(", ", TrainerLevers.BASE_WEIGHTS));
            }
            if (trainable.full()) {
                throw new InvalidSpecException("base_weights sets how frozen weights are stored, and this run trains every"
                        + " weight; give lora_rank (or lora_targets for a partial fine-tune)");
            }
            b.baseWeights = base;
        }
        int swap = spec.blocksToSwap() == null ? 0 : spec.blocksToSwap();
        int most = TrainerLevers.maxBlocksToSwap(profile);
        if (swap < 0 || swap > most) {
            throw new InvalidSpecException("blocks_to_swap must be between 0 and " + most + " for " + profile.info.id()
                    + ", got " + swap);
        }
        b.blocksToSwap = swap;
    }

    /** Optimizer steps to see {@code images} samples {@code epochs} times at a global batch (the last step partial). */
    private static Long stepsFor(Long images, Double epochs, long globalBatch, Long totalSteps) {
        if (images == null) {
            throw new InvalidSpecException("epochs needs the number of images (samples) per epoch");
        }
        if (images < 1 || images > 1_000_000_000_000L) {
            throw new InvalidSpecException("images must be between 1 and 10^12, got " + images);
        }
        double e = epochs == null ? 1 : epochs;
        if (!(e > 0) || e > 1_000_000) {
            throw new InvalidSpecException("epochs must be above 0 and at most 10^6, got " + epochs);
        }
        long steps = (long) Math.ceil(images * e / globalBatch);
        if (totalSteps != null && totalSteps != steps) {
            throw new InvalidSpecException("total_steps " + totalSteps + " disagrees with " + images + " images x " + e
                    + " epochs at a global batch of " + globalBatch + " (" + steps + " steps); give one or the other");
        }
        return Math.max(1, steps);
    }

    /** Blocks recomputed per group: one number per group, or one for all blocks in forward order; null: all or none. */
    private static int[] checkpointBlocks(ModelInfo m, List<Integer> given, boolean all) {
        int[] depths = Architecture.groupDepths(m);
        if (given == null || given.isEmpty()) {
            return Arrays.stream(depths).map(depth -> all ? depth : 0).toArray();
        }
        int[] out = new int[depths.length];
        int total = Arrays.stream(depths).sum();
        for (Integer n : given) {
            if (n == null || n < 0) {
                throw new InvalidSpecException("checkpoint_blocks must be whole numbers of blocks from 0, got " + given);
            }
        }
        if (given.size() == depths.length && depths.length > 1) {
            for (int i = 0; i < depths.length; i++) {
                // Open-Sora 2.0 writes (8, 100) for 38 single-stream blocks: its model slices blocks[:n], so more is all.
                out[i] = Math.min(given.get(i), depths[i]);
            }
            return out;
        }
        if (given.size() != 1) {
            throw new InvalidSpecException(m.id() + " has " + depths.length + " block group" + (depths.length == 1 ? "" : "s")
                    + "; checkpoint_blocks takes one number" + (depths.length == 1 ? "" : " or " + depths.length) + ", got " + given);
        }
        int left = Math.min(given.get(0), total);
        for (int i = 0; i < depths.length; i++) {
            out[i] = Math.min(left, depths[i]);
            left -= out[i];
        }
        return out;
    }

    private static int positive(String name, Integer value, int fallback) {
        int v = value != null ? value : fallback;
        if (v < 1) {
            throw new InvalidSpecException(name + " must be at least 1, got " + v);
        }
        int limit = LIMITS.getOrDefault(name, Integer.MAX_VALUE);
        if (v > limit) {
            throw new InvalidSpecException(name + " must be at most " + limit + ", got " + v);
        }
        return v;
    }

    private static String choice(String name, String value, String fallback, List<String> allowed) {
        String v = (value != null ? value : fallback);
        if (v == null) {
            throw new InvalidSpecException("no " + name + " given; choose one of " + String.join(", ", allowed));
        }
        v = v.strip().toLowerCase(Locale.ROOT);
        if (name.equals("precision") && v.equals("no")) {
            return "fp32";
        }
        if (!allowed.contains(v)) {
            throw new InvalidSpecException("unknown " + name + " '" + v + "'; choose one of " + String.join(", ", allowed));
        }
        return v;
    }
}
