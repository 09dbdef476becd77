package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.EncoderInfo;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Predicts what a run costs: parameters, peak memory with a per-term breakdown, step time, the largest batch that
 * fits and the single changes that help. A pure function of the bundled catalogs, an optional {@link Calibration}
 * and the {@link RunSpec}. Immutable and thread-safe; build one and share it.
 *
 * <p>Memory follows PyTorch's accounting under DDP/accelerate: fp32 master weights and gradients, optimizer state
 * per tensor shape, activations per block, and the caching allocator's overhead on top. Step time is GEMM FLOPs
 * over the dtype's dense peak times an efficiency, plus memory-bound element-wise traffic, online encoders,
 * optimizer/EMA updates and the gradient all-reduce. The constants below are documented in docs/ESTIMATOR.md
 * together with the measurements they were checked against.
 */
public final class Estimator {

    static final long GB = 1_000_000_000L;
    /** CUDA context, cuBLAS/cuDNN workspaces and kernels loaded by PyTorch. */
    static final long CUDA_CONTEXT_BYTES = 800_000_000L;
    /** NCCL communicator buffers on multi-GPU runs. */
    static final long NCCL_BYTES = 400_000_000L;
    /** Reserved/allocated ratio of PyTorch's caching allocator is 1.1–1.2; this is the excess. */
    static final double ALLOCATOR_OVERHEAD = 0.15;
    /** Checkpointed blocks keep their fp32 residual input: bytes per token per hidden unit. */
    static final double CHECKPOINT_INPUT_BYTES = 4;
    /**
     * A block's saved tensors with half parameters, relative to autocast over fp32 parameters: the fp32 residual and
     * norm tensors autocast keeps become half (about a fifth of the autocast tally). Checked with Open-Sora 2.0's
     * searched batch (45 images at 256 px fit a 140 GB H200).
     */
    static final double HALF_STREAM_ACTIVATION_FACTOR = 0.8;
    /** While a block recomputes and back-propagates, its saved tensors plus their gradients are live. */
    static final double LIVE_BLOCK_FACTOR = 1.5;
    /** fp32 inputs and outputs of the patch embedding, final layer and loss per token per hidden unit. */
    static final double EMBEDDING_BYTES = 16;
    /**
     * Element-wise traffic (norms, modulation, activations, residuals, casts) per token per hidden unit per block
     * for one training step without recomputation (forward and backward); recomputation adds a third.
     */
    static final double ELEMENTWISE_BYTES_AMP = 140;
    static final double ELEMENTWISE_BYTES_FP32 = 230;
    /** Fraction of peak bandwidth element-wise kernels reach. */
    static final double BANDWIDTH_EFFICIENCY = 0.8;
    /** Convolutional encoders reach less of the peak than transformer GEMMs. */
    static final double CONV_EFFICIENCY_RATIO = 0.66;
    /**
     * Memory-efficient attention (xformers, SDPA) on fp32-upcast q, k, v (PixArt/Sana {@code fp32_attention}): the
     * fp32 copies of q, k, v and the output a block keeps for backward, beyond the half ones, per token per hidden unit.
     */
    static final double UPCAST_ATTENTION_BYTES = 8;
    /**
     * An image encoder run outside autocast keeps fp32 convolution outputs: fast-DiT's fp32 and AMP runs with
     * online latents differ by this much in encoder working memory.
     */
    static final double FP32_ENCODER_TRANSIENT_FACTOR = 1.25;
    /** Optimizer step traffic per trainable parameter (fused, memory-bound). */
    private static final Map<String, Double> OPTIMIZER_TRAFFIC = Map.of(
            "adamw", 28.0, "adamw8bit", 18.0, "came", 32.0, "came8bit", 22.0, "adafactor", 20.0, "sgd", 16.0);
    /** Beyond one node the all-reduce runs over the network. */
    private static final double INTER_NODE_ALLREDUCE_GBPS = 10;
    /**
     * Hopper and Blackwell clusters are built with 400 Gb/s (NDR) InfiniBand per GPU, twice the 200 Gb/s (HDR) of
     * A100 clusters; fitted with Open-Sora 2.0's 224-GPU H200 run.
     */
    private static final double INTER_NODE_ALLREDUCE_GBPS_NDR = 25;
    private static final int GPUS_PER_NODE = 8;
    private static final int MAX_BATCH_LIMIT = 1 << 20;

    static final List<String> PRECISIONS = List.of("fp32", "tf32", "fp16", "bf16");
    static final List<String> FEATURES = List.of("online", "precomputed");
    static final List<String> WEIGHTS = List.of("fp32", "mixed", "pure");
    /** More buckets than any real bucket_config has; keeps one spec's price bounded. */
    static final int MAX_BUCKETS = 64;
    static final List<String> ATTENTIONS = List.of("flash", "math");
    /** Run-internal feature states when one encoder's output is read from disk and the other's is computed. */
    static final String TEXT_PRECOMPUTED = "text-precomputed";
    static final String VAE_PRECOMPUTED = "vae-precomputed";

    private final Catalog catalog;
    private final Map<String, ModelProfile> profiles;
    private final Calibration calibration;

    private Estimator(Catalog catalog, Map<String, ModelProfile> profiles, Calibration calibration) {
        this.catalog = catalog;
        this.profiles = profiles;
        this.calibration = calibration;
    }

    /** An estimator over the bundled model, encoder and GPU catalogs. */
    public static Estimator bundled() {
        return BundledHolder.BUNDLED;
    }

    /** The bundled catalogs are read once; the estimator over them is immutable and shared. */
    private static final class BundledHolder {
        static final Estimator BUNDLED = of(Catalog.bundled());
    }

    /**
     * An estimator over a catalog (e.g. {@code Catalog.bundled().withUserFiles(files)}).
     *
     * @throws dev.trainwatch.estimator.catalog.CatalogException when a model cannot be built from its entry
     */
    public static Estimator of(Catalog catalog) {
        Map<String, ModelProfile> profiles = new LinkedHashMap<>();
        for (ModelInfo model : catalog.models()) {
            try {
                profiles.put(model.id(), new ModelProfile(model));
            } catch (RuntimeException e) {
                throw new dev.trainwatch.estimator.catalog.CatalogException("model " + model.id() + " ("
                        + catalog.origin("model", model.id()) + ") cannot be built: " + e.getMessage());
            }
        }
        return new Estimator(catalog, Collections.unmodifiableMap(profiles), Calibration.NONE);
    }

    /**
     * The bundled catalogs plus user catalog files, in order (none: the bundled estimator).
     *
     * @throws dev.trainwatch.estimator.catalog.CatalogException one line naming the file and entry when one is wrong
     */
    public static Estimator withUserCatalogs(List<java.nio.file.Path> files) {
        if (files == null || files.isEmpty()) {
            return bundled();
        }
        return of(Catalog.bundled().withUserFiles(files));
    }

    /** The same estimator with step time and memory scaled per (GPU id, model family). */
    public Estimator withCalibration(Calibration calibration) {
        return new Estimator(catalog, profiles, calibration == null ? Calibration.NONE : calibration);
    }

    public Calibration calibration() {
        return calibration;
    }

    public Catalog catalog() {
        return catalog;
    }

    public List<ModelInfo> models() {
        return catalog.models();
    }

    public List<GpuInfo> gpus() {
        return catalog.gpus();
    }

    public Optional<ModelInfo> model(String id) {
        return catalog.model(id);
    }

    public Optional<GpuInfo> gpu(String idOrNvmlName) {
        return catalog.gpu(idOrNvmlName);
    }

    /** The catalog GPU id for an id, alias or NVML device name ("NVIDIA A100-SXM4-80GB" → {@code a100-80gb}). */
    public Optional<String> resolveGpuId(String idOrNvmlName) {
        return catalog.resolveGpuId(idOrNvmlName);
    }

    /**
     * Blocks per block group, in forward order, as {@code checkpoint_blocks} counts them: one group for DiT, PixArt
     * and Sana; spatial and temporal blocks for STDiT3; double- and single-stream blocks for MMDiT.
     */
    public int[] blockGroups(String modelId) {
        return Architecture.groupDepths(profile(modelId).info);
    }

    /** Parameter count derived from the architecture. */
    public long params(String modelId) {
        return profile(modelId).params;
    }

    /** Parameters that receive gradients. */
    public long trainableParams(String modelId) {
        return profile(modelId).trainableParams;
    }

    /** Optimizer state bytes of a model on one GPU without sharding, counted per tensor shape. */
    public long optimizerStateBytes(String modelId, String optimizer) {
        String o = OptimizerState.normalize(optimizer);
        if (o == null) {
            throw new InvalidSpecException("unknown optimizer '" + optimizer + "'; choose one of "
                    + String.join(", ", OptimizerState.OPTIMIZERS));
        }
        return profile(modelId).optimizerBytes(o);
    }

    /** Forward MACs per sample at a resolution (frames for video models), from the architecture. */
    public double forwardMacs(String modelId, int height, int width, int frames) {
        ModelProfile p = profile(modelId);
        Run run = new Run(p, null, 1, 1, height, width, frames, "fp32", "adamw", false, false, "precomputed", 0,
                "flash", 1, null);
        return run.forwardMacsPerSample;
    }

    /**
     * Prices a run.
     *
     * @throws InvalidSpecException for unknown ids or impossible values, with a one-line message
     */
    public Estimate estimate(RunSpec spec) {
        if (spec != null && spec.buckets() != null && !spec.buckets().isEmpty()) {
            return estimateBuckets(spec);
        }
        Run run = resolve(spec);
        Costs costs = costs(run, run.batch);
        int maxBatch = maxBatch(run, costs);
        List<Suggestion> suggestions = suggestions(run, costs, maxBatch);
        List<String> notes = notes(run, costs);
        Double total = run.totalSteps == null ? null : costs.stepSeconds * run.totalSteps;
        return new Estimate(run.resolvedSpec(), run.profile.info.id(), run.gpu.id(), run.profile.params,
                run.profile.trainableParams, costs.peakBytes, run.gpu.memoryBytes(), costs.peakBytes <= run.gpu.memoryBytes(),
                maxBatch, costs.stepSeconds, costs.samplesPerSecond, costs.memory, costs.time, total,
                suggestions, notes, flops(run));
    }

    /** Model FLOPs (3 × forward), executed FLOPs (4 × forward under gradient checkpointing) and the dtype's peak. */
    private static Estimate.Flops flops(Run run) {
        double forward = 2 * run.forwardMacsPerSample;
        double passes = 3 + run.recomputedShare();
        return new Estimate.Flops(3 * forward, passes * forward, run.peakTflops() * 1e12, run.precision);
    }

    /**
     * A multi-bucket run: every bucket priced on its own; the run must fit its largest bucket, so memory, the largest
     * batch and the suggestions are that bucket's, and the step time is the mean over buckets weighted by their share
     * of the steps.
     */
    private Estimate estimateBuckets(RunSpec spec) {
        List<RunSpec.Bucket> buckets = spec.buckets();
        if (buckets.size() > MAX_BUCKETS) {
            throw new InvalidSpecException("at most " + MAX_BUCKETS + " buckets, got " + buckets.size());
        }
        RunSpec base = spec.withRegime(spec.textFeatures(), spec.vaeFeatures(), spec.weights(), spec.checkpointBlocks(),
                spec.vaeMicroBatch(), null);
        // Each bucket is priced (memory and step time); only the one that decides whether the run fits gets the
        // full treatment (largest batch, suggestions, notes), so many buckets stay cheap.
        List<RunSpec> specs = new ArrayList<>();
        List<Run> runs = new ArrayList<>();
        List<Costs> priced = new ArrayList<>();
        List<Double> weights = new ArrayList<>();
        double weightSum = 0;
        for (RunSpec.Bucket bucket : buckets) {
            if (bucket == null) {
                throw new InvalidSpecException("a bucket is empty");
            }
            double w = bucket.weight() == null ? 1.0 : bucket.weight();
            if (!(w > 0) || !Double.isFinite(w)) {
                throw new InvalidSpecException("bucket weight must be above 0, got " + bucket.weight());
            }
            Integer h = bucket.height() != null ? bucket.height() : spec.height() != null ? spec.height() : spec.resolution();
            Integer wd = bucket.width() != null ? bucket.width() : spec.width() != null ? spec.width() : spec.resolution();
            Integer batch = bucket.batch() != null ? bucket.batch() : spec.batch();
            Integer frames = bucket.frames() != null ? bucket.frames() : spec.frames();
            RunSpec one = (h == null || wd == null) ? base.withShape(batch, spec.resolution(), null, null, frames)
                    : base.withShape(batch, null, h, wd, frames);
            Run run = resolve(one);
            specs.add(one);
            runs.add(run);
            priced.add(costs(run, run.batch));
            weights.add(w);
            weightSum += w;
        }
        int worstIndex = 0;
        for (int i = 1; i < priced.size(); i++) {
            if (priced.get(i).peakBytes() > priced.get(worstIndex).peakBytes()) {
                worstIndex = i;
            }
        }
        Estimate worst = estimate(specs.get(worstIndex));
        double step = 0;
        double samples = 0;
        double modelFlops = 0;
        double hardwareFlops = 0;
        Map<String, Double> stepBreakdown = new LinkedHashMap<>();
        for (int i = 0; i < priced.size(); i++) {
            Costs c = priced.get(i);
            Estimate.Flops f = flops(runs.get(i));
            double share = weights.get(i) / weightSum;
            double bucketSamples = share * c.samplesPerSecond() * c.stepSeconds();
            step += share * c.stepSeconds();
            samples += bucketSamples;
            modelFlops += bucketSamples * f.modelPerSample();
            hardwareFlops += bucketSamples * f.hardwarePerSample();
            c.time().forEach((k, v) -> stepBreakdown.merge(k, share * v, Double::sum));
        }
        // FLOPs per sample averaged over the samples the buckets train on, so MFU over the mean step stays right.
        Estimate.Flops flops = new Estimate.Flops(modelFlops / samples, hardwareFlops / samples,
                worst.flops().peakPerGpu(), worst.flops().dtype());
        List<String> notes = new ArrayList<>();
        List<Integer> byMemory = new ArrayList<>();
        for (int i = 0; i < priced.size(); i++) {
            byMemory.add(i);
        }
        byMemory.sort(Comparator.comparingLong((Integer i) -> priced.get(i).peakBytes()).reversed());
        StringBuilder line = new StringBuilder(priced.size() + " buckets priced; largest memory first:");
        for (int k = 0; k < Math.min(3, byMemory.size()); k++) {
            int i = byMemory.get(k);
            line.append(k == 0 ? " " : "; ").append(describeBucket(runs.get(i).resolvedSpec())).append(" batch ")
                    .append(runs.get(i).batch).append(' ').append(gb(priced.get(i).peakBytes()))
                    .append(String.format(Locale.ROOT, " %.2f s", priced.get(i).stepSeconds()));
        }
        if (byMemory.size() > 3) {
            line.append("; ").append(byMemory.size() - 3).append(" more");
        }
        notes.add(line.toString());
        notes.add(String.format(Locale.ROOT,
                "memory, largest batch and suggestions (their step times too) are for the largest bucket (%s); the step time %.2f s is the mean over buckets weighted by their share",
                describeBucket(worst.spec()), step));
        notes.addAll(worst.notes());
        RunSpec resolved = worst.spec().withRegime(worst.spec().textFeatures(), worst.spec().vaeFeatures(),
                worst.spec().weights(), worst.spec().checkpointBlocks(), worst.spec().vaeMicroBatch(), List.copyOf(buckets));
        Double total = spec.totalSteps() == null ? null : step * spec.totalSteps();
        return new Estimate(resolved, worst.model(), worst.gpu(), worst.params(), worst.trainableParams(),
                worst.peakMemoryBytes(), worst.gpuMemoryBytes(), worst.fits(), worst.maxBatch(), step, samples / step,
                worst.breakdown(), Collections.unmodifiableMap(stepBreakdown), total, worst.suggestions(), List.copyOf(notes),
                flops);
    }

    private static String describeBucket(RunSpec s) {
        String size = s.resolution() != null ? s.resolution() + "x" + s.resolution() : s.height() + "x" + s.width();
        return s.frames() != null ? size + "x" + s.frames() + "f" : size;
    }

    // ---------------------------------------------------------------------------------------------- resolution

    private ModelProfile profile(String modelId) {
        Optional<ModelInfo> model = catalog.model(modelId);
        if (model.isEmpty()) {
            throw new InvalidSpecException("unknown model '" + modelId + "'; nearest: "
                    + String.join(", ", Catalog.nearest(modelId, catalog.modelIds())) + " (see 'trainwatch models')");
        }
        return profiles.get(model.get().id());
    }

    private Run resolve(RunSpec spec) {
        if (spec == null || spec.model() == null || spec.model().isBlank()) {
            throw new InvalidSpecException("no model given; choose one of: " + String.join(", ", catalog.modelIds()));
        }
        ModelProfile profile = profile(spec.model());
        ModelInfo m = profile.info;
        ModelInfo.Defaults d = m.defaults();
        if (spec.gpu() == null || spec.gpu().isBlank()) {
            throw new InvalidSpecException("no GPU given; choose one of: " + String.join(", ", catalog.gpuIds()));
        }
        List<String> ambiguous = catalog.ambiguousGpuIds(spec.gpu());
        if (!ambiguous.isEmpty()) {
            // The example is one of these cards' own NVML name (an A100's name for "h100" sent users the wrong way).
            String example = ambiguous.stream().map(catalog::gpu).flatMap(java.util.Optional::stream)
                    .flatMap(g -> g.nvmlNames() == null ? java.util.stream.Stream.empty() : g.nvmlNames().stream())
                    .findFirst().map(n -> ", e.g. \"" + n + "\"").orElse("");
            throw new InvalidSpecException("GPU '" + spec.gpu() + "' is ambiguous: " + String.join(", ", ambiguous)
                    + " are different cards; name the one you use (or give its NVML name" + example + ")");
        }
        GpuInfo gpu = catalog.gpu(spec.gpu()).orElseThrow(() -> new InvalidSpecException("unknown GPU '"
                + spec.gpu() + "'; nearest: " + String.join(", ", Catalog.nearest(spec.gpu(), catalog.gpuIds()))
                + " (see 'trainwatch gpus')"));
        int gpus = positive("gpus", spec.gpus(), 1);
        int batch = positive("batch", spec.batch(), 1);
        int resolution = positive("resolution", spec.resolution(), d.resolution() == null ? 256 : d.resolution());
        int height = spec.height() != null ? positive("height", spec.height(), 0) : resolution;
        int width = spec.width() != null ? positive("width", spec.width(), 0) : resolution;
        if ((spec.height() == null) != (spec.width() == null)) {
            throw new InvalidSpecException("give both height and width, or a square resolution");
        }
        int grid = m.pixelsPerToken();
        for (int side : new int[] {height, width}) {
            if (side % grid != 0) {
                throw new InvalidSpecException(m.id() + " needs image sides divisible by " + grid + " (VAE /"
                        + m.latentDownsample() + " × patch " + m.patch() + "); " + side + " is not");
            }
        }
        int frames;
        if (m.video()) {
            frames = positive("frames", spec.frames(), d.frames() == null ? 16 : d.frames());
        } else {
            if (spec.frames() != null && spec.frames() != 1) {
                throw new InvalidSpecException(m.id() + " is an image model; frames apply to video models only");
            }
            frames = 1;
        }
        String precision = choice("precision", spec.precision(), d.precision(), PRECISIONS);
        if ("no".equals(precision)) {
            precision = "fp32";
        }
        if (precision.equals("bf16") && gpu.bf16Tflops() == null) {
            throw new InvalidSpecException(gpu.id() + " has no bf16 tensor cores; use fp16");
        }
        if (precision.equals("tf32") && gpu.tf32Tflops() == null) {
            throw new InvalidSpecException(gpu.id() + " has no TF32; use fp32 or fp16");
        }
        String optimizerName = spec.optimizer() != null ? spec.optimizer() : d.optimizer();
        String optimizer = OptimizerState.normalize(optimizerName);
        if (optimizer == null) {
            throw new InvalidSpecException("unknown optimizer '" + optimizerName + "'; choose one of "
                    + String.join(", ", OptimizerState.OPTIMIZERS));
        }
        boolean checkpointing = spec.gradCheckpointing() != null ? spec.gradCheckpointing()
                : Boolean.TRUE.equals(d.gradCheckpointing());
        boolean ema = spec.ema() != null ? spec.ema() : Boolean.TRUE.equals(d.ema());
        String features = choice("features", spec.features(), d.features(), FEATURES);
        String textFeatures = spec.textFeatures() == null ? features : choice("text_features", spec.textFeatures(), null, FEATURES);
        String vaeFeatures = spec.vaeFeatures() == null ? features : choice("vae_features", spec.vaeFeatures(), null, FEATURES);
        if (m.textEncoder() == null) {
            textFeatures = vaeFeatures;
        }
        features = textFeatures.equals(vaeFeatures) ? textFeatures
                : textFeatures.equals("precomputed") ? TEXT_PRECOMPUTED : VAE_PRECOMPUTED;
        String weights = choice("weights", spec.weights(), "fp32", WEIGHTS);
        if (!weights.equals("fp32") && !(precision.equals("fp16") || precision.equals("bf16"))) {
            throw new InvalidSpecException("weights '" + weights + "' holds half-precision parameters; it needs precision fp16 or bf16, got " + precision);
        }
        Integer vaeMicroBatch = spec.vaeMicroBatch();
        if (vaeMicroBatch != null && (vaeMicroBatch < 1 || vaeMicroBatch > 100_000)) {
            throw new InvalidSpecException("vae_micro_batch must be between 1 and 100000, got " + vaeMicroBatch);
        }
        int zero = spec.zero() != null ? spec.zero() : d.zero() == null ? 0 : d.zero();
        if (zero < 0 || zero > 3) {
            throw new InvalidSpecException("zero must be 0, 1, 2 or 3, got " + zero);
        }
        String attention = choice("attention", spec.attention(), d.attention(), ATTENTIONS);
        int accumulation = positive("grad_accumulation", spec.gradAccumulation(), 1);
        Long totalSteps = spec.totalSteps();
        if (totalSteps != null && totalSteps < 1) {
            throw new InvalidSpecException("total_steps must be at least 1, got " + totalSteps);
        }
        int[] checkpointed = checkpointBlocks(m, spec.checkpointBlocks(), checkpointing);
        boolean anyCheckpointed = false;
        for (int c : checkpointed) {
            anyCheckpointed |= c > 0;
        }
        return new Run(profile, gpu, gpus, batch, height, width, frames, precision, optimizer, anyCheckpointed, ema,
                features, zero, attention, accumulation, totalSteps)
                .withRegime(weights, checkpointed, vaeMicroBatch)
                .withArchitecture(catalog.architecture(gpu))
                .withEncoders(catalog.encoder(m.textEncoder()).orElse(null), catalog.encoder(m.vae()).orElseThrow())
                .withSquare(spec.height() == null ? resolution : null)
                .withFactors(calibration.factorsFor(gpu.id(), m.family()));
    }

    /**
     * Blocks recomputed per block group. One number per group, or one number for all blocks in forward order; null
     * means all blocks or none, as {@code gradCheckpointing} says.
     */
    private static int[] checkpointBlocks(ModelInfo m, List<Integer> given, boolean all) {
        int[] depths = Architecture.groupDepths(m);
        int[] out = new int[depths.length];
        if (given == null || given.isEmpty()) {
            for (int i = 0; i < depths.length; i++) {
                out[i] = all ? depths[i] : 0;
            }
            return out;
        }
        int total = 0;
        for (int depth : depths) {
            total += depth;
        }
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

    /** Upper bounds keep the arithmetic (and the batch search) far from overflow; no real run comes near them. */
    private static final Map<String, Integer> LIMITS = Map.of("gpus", 1_000_000, "batch", 1_000_000,
            "resolution", 65_536, "height", 65_536, "width", 65_536, "frames", 100_000, "grad_accumulation", 1_000_000);

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

    // ---------------------------------------------------------------------------------------------- the model

    /** Everything about a run but the batch, resolved; plus derived sizes. Immutable. */
    static final class Run {
        final ModelProfile profile;
        final GpuInfo gpu;
        final int gpus;
        final int batch;
        final int height;
        final int width;
        final int frames;
        final String precision;
        final String optimizer;
        final boolean checkpointing;
        final boolean ema;
        final String features;
        final int zero;
        final String attention;
        final int accumulation;
        final Long totalSteps;
        EncoderInfo textEncoder;
        EncoderInfo vae;
        Integer squareResolution;
        Calibration.Factors factors = Calibration.Factors.IDENTITY;
        /** fp32, mixed (half params + fp32 master in the optimizer) or pure (all half). */
        String weights = "fp32";
        /** Blocks recomputed per layer group of {@link #plan}. */
        int[] checkpointed;
        /** Images the VAE encodes at once when the spec says; null: the model's pipeline default. */
        Integer vaeMicroBatch;

        final long latentFrames;
        final long spatialTokens;
        final long tokens;
        final List<LayerPlan> plan;
        final double forwardMacsPerSample;
        /** The attention products' share of {@link #forwardMacsPerSample}. */
        final double attentionMacsPerSample;
        /** Efficiencies of the GPU's architecture per dtype (null only for parameter-only runs without a GPU). */
        dev.trainwatch.estimator.catalog.ArchitectureInfo arch;

        Run(ModelProfile profile, GpuInfo gpu, int gpus, int batch, int height, int width, int frames,
                String precision, String optimizer, boolean checkpointing, boolean ema, String features, int zero,
                String attention, int accumulation, Long totalSteps) {
            this.profile = profile;
            this.gpu = gpu;
            this.gpus = gpus;
            this.batch = batch;
            this.height = height;
            this.width = width;
            this.frames = frames;
            this.precision = precision;
            this.optimizer = optimizer;
            this.checkpointing = checkpointing;
            this.ema = ema;
            this.features = features;
            this.zero = zero;
            this.attention = attention;
            this.accumulation = accumulation;
            this.totalSteps = totalSteps;
            ModelInfo m = profile.info;
            long temporal = Math.max(1, m.temporalDownsample());
            long latent = m.video() ? (frames + temporal - 1) / temporal : 1;
            this.latentFrames = Math.max(1, latent / Math.max(1, m.patchT()));
            long grid = m.pixelsPerToken();
            this.spatialTokens = (height / grid) * (width / grid);
            this.tokens = latentFrames * spatialTokens;
            this.plan = Architecture.plan(m, latentFrames, spatialTokens);
            double macs = (double) profile.imageTokenWeights * tokens
                    + (double) profile.textTokenWeights * m.textTokens()
                    + (double) profile.jointTokenWeights * (tokens + m.textTokens())
                    + profile.sampleWeights;
            double attentionMacs = 0;
            for (LayerPlan layer : plan) {
                attentionMacs += layer.blocks() * layer.attentionMacsPerSample();
            }
            this.attentionMacsPerSample = attentionMacs;
            this.forwardMacsPerSample = macs + attentionMacs;
            this.checkpointed = new int[plan.size()];
            for (int i = 0; i < plan.size(); i++) {
                this.checkpointed[i] = checkpointing ? plan.get(i).blocks() : 0;
            }
        }

        Run withRegime(String weights, int[] checkpointed, Integer vaeMicroBatch) {
            this.weights = weights;
            if (checkpointed != null && checkpointed.length == plan.size()) {
                this.checkpointed = checkpointed.clone();
            }
            this.vaeMicroBatch = vaeMicroBatch;
            return this;
        }

        /** Share of the blocks' forward work recomputed in backward (0 none, 1 full checkpointing). */
        double recomputedShare() {
            double all = 0;
            double recomputed = 0;
            for (int i = 0; i < plan.size(); i++) {
                LayerPlan layer = plan.get(i);
                double perBlock = layer.tokensPerSample() + layer.attentionMacsPerSample() / Math.max(1, profile.info.hidden()) / 12.0;
                all += layer.blocks() * perBlock;
                recomputed += checkpointed[i] * perBlock;
            }
            return all == 0 ? 0 : recomputed / all;
        }

        boolean partialCheckpointing() {
            for (int i = 0; i < plan.size(); i++) {
                if (checkpointed[i] != plan.get(i).blocks()) {
                    return checkpointing;
                }
            }
            return false;
        }

        boolean textOnline() {
            return features.equals("online") || features.equals(VAE_PRECOMPUTED);
        }

        boolean vaeOnline() {
            return features.equals("online") || features.equals(TEXT_PRECOMPUTED);
        }

        int vaeMicroBatch() {
            return vaeMicroBatch != null ? vaeMicroBatch : profile.info.vaeMicroBatch();
        }

        private Run copy(String precision, String optimizer, boolean checkpointing, String features, int zero,
                int batch, int accumulation) {
            return copy(precision, optimizer, checkpointing, features, zero, batch, accumulation, attention);
        }

        Run withAttention(String newAttention) {
            return copy(precision, optimizer, checkpointing, features, zero, batch, accumulation, newAttention);
        }

        private Run copy(String precision, String optimizer, boolean checkpointing, String features, int zero,
                int batch, int accumulation, String attention) {
            Run r = new Run(profile, gpu, gpus, batch, height, width, frames, precision, optimizer, checkpointing,
                    ema, features, zero, attention, accumulation, totalSteps);
            r.textEncoder = textEncoder;
            r.arch = arch;
            r.vae = vae;
            r.squareResolution = squareResolution;
            r.factors = factors;
            r.weights = weights;
            r.vaeMicroBatch = vaeMicroBatch;
            if (checkpointing == this.checkpointing) {
                r.checkpointed = this.checkpointed.clone();
            }
            return r;
        }

        boolean materialisesScores() {
            return attention.equals("math") && plan.stream().anyMatch(layer -> layer.attentionScoresPerSample() > 0);
        }

        Run withEncoders(EncoderInfo text, EncoderInfo vae) {
            this.textEncoder = text;
            this.vae = vae;
            return this;
        }

        Run withArchitecture(dev.trainwatch.estimator.catalog.ArchitectureInfo architecture) {
            this.arch = architecture;
            return this;
        }

        Run withSquare(Integer resolution) {
            this.squareResolution = resolution;
            return this;
        }

        Run withFactors(Calibration.Factors factors) {
            this.factors = factors;
            return this;
        }

        boolean half() {
            return precision.equals("fp16") || precision.equals("bf16");
        }

        /** Some encoder runs every step. */
        boolean online() {
            return !features.equals("precomputed");
        }

        double peakTflops() {
            return switch (precision) {
                case "fp16" -> gpu.fp16Tflops();
                case "bf16" -> gpu.bf16Tflops();
                case "tf32" -> gpu.tf32Tflops();
                default -> gpu.fp32Tflops();
            };
        }

        double gemmEfficiency() {
            if (precision.equals("fp32")) {
                return arch.fp32();
            }
            if (gpu.efficiency() > 0) {
                return gpu.efficiency();
            }
            return precision.equals("tf32") ? arch.tf32() : arch.half();
        }

        double tf32Efficiency() {
            return gpu.efficiency() > 0 ? gpu.efficiency() : arch.tf32();
        }

        /**
         * FLOP/s of the attention products (QK^T, AV). Models that upcast attention to fp32 under autocast (PixArt's
         * and Sana's {@code fp32_attention}) run them through xformers' fp32 kernels: 3xTF32 tensor-core MMAs
         * (cutlass {@code OpMultiplyAddFastF32}, a third of the TF32 rate) from Ampere on, plain SIMT fp32 on Volta
         * and Turing, which have no fp32 or TF32 tensor cores.
         */
        double attentionFlopsPerSecond() {
            if (half() && profile.info.attentionUpcast()) {
                return gpu.tf32Tflops() != null ? gpu.tf32Tflops() * 1e12 * tf32Efficiency() / 3
                        : gpu.fp32Tflops() * 1e12 * arch.fp32();
            }
            return peakTflops() * 1e12 * gemmEfficiency();
        }

        /**
         * Convolutions go through cuDNN, whose TF32 switch ({@code torch.backends.cudnn.allow_tf32}) is on by
         * default: an fp32 run's image encoder uses TF32 tensor cores even when matmuls do not.
         */
        double convFlopsPerSecond() {
            boolean tf32 = (precision.equals("fp32") || precision.equals("tf32")) && gpu.tf32Tflops() != null;
            double peak = tf32 ? gpu.tf32Tflops() * tf32Efficiency() : peakTflops() * gemmEfficiency();
            return peak * 1e12 * CONV_EFFICIENCY_RATIO;
        }

        long pixelsPerSample() {
            return (long) height * width * frames;
        }

        RunSpec resolvedSpec() {
            boolean split = features.equals(TEXT_PRECOMPUTED) || features.equals(VAE_PRECOMPUTED);
            List<Integer> partial = null;
            if (partialCheckpointing()) {
                partial = new ArrayList<>();
                for (int c : checkpointed) {
                    partial.add(c);
                }
            }
            return new RunSpec(profile.info.id(), gpu.id(), gpus, batch, squareResolution,
                    squareResolution == null ? height : null, squareResolution == null ? width : null,
                    profile.info.video() ? frames : null, precision, optimizer, checkpointing, ema,
                    online() ? "online" : "precomputed", zero, attention, accumulation, totalSteps,
                    split ? (textOnline() ? "online" : "precomputed") : null,
                    split ? (vaeOnline() ? "online" : "precomputed") : null,
                    weights, partial, profile.info.video() ? vaeMicroBatch() : null, null);
        }
    }

    /** The priced run at one batch size. */
    record Costs(long peakBytes, Map<String, Long> memory, double stepSeconds, Map<String, Double> time,
            double samplesPerSecond) {
    }

    Costs costs(Run r, int batch) {
        Map<String, Long> memory = memory(r, batch);
        long peak = 0;
        for (long v : memory.values()) {
            peak += v;
        }
        Map<String, Double> time = stepTime(r, batch);
        double step = 0;
        for (double v : time.values()) {
            step += v;
        }
        return new Costs(peak, Collections.unmodifiableMap(memory), step, Collections.unmodifiableMap(time),
                (double) batch * r.accumulation * r.gpus / step);
    }

    /** Peak bytes only: the bisection for the largest batch calls this. */
    long peakBytes(Run r, int batch) {
        long peak = 0;
        for (long v : memory(r, batch).values()) {
            peak += v;
        }
        return peak;
    }

    private Map<String, Long> memory(Run r, int b) {
        ModelProfile p = r.profile;
        ModelInfo m = p.info;
        int d = r.gpus;
        boolean sharded = d > 1;
        Map<String, Long> mem = new LinkedHashMap<>();
        boolean fp32Params = r.weights.equals("fp32");
        long weights = (fp32Params ? 4 : 2) * p.params;
        mem.put("weights", r.zero >= 3 && sharded ? weights / d : weights);
        if (r.half() && fp32Params) {
            // Autocast caches a half copy of each weight it casts until the forward pass ends.
            mem.put("autocast_cache", (r.zero >= 3 && sharded ? 2 * p.trainableParams / d : 2 * p.trainableParams));
        }
        long grads = (fp32Params ? 4 : 2) * p.trainableParams;
        mem.put("gradients", r.zero >= 2 && sharded ? grads / d : grads);
        if (r.weights.equals("mixed")) {
            // ColossalAI / DeepSpeed / FSDP mixed precision: the optimizer holds an fp32 master copy, sharded with it.
            long master = 4 * p.trainableParams;
            mem.put("master_weights", r.zero >= 1 && sharded ? master / d : master);
        }
        long optimizer = p.optimizerBytes(r.optimizer);
        if (r.weights.equals("pure")) {
            optimizer /= 2; // states kept in the parameters' half dtype
        }
        mem.put("optimizer", r.zero >= 1 && sharded ? optimizer / d : optimizer);
        if (r.ema) {
            mem.put("ema", 4 * p.params);
        }
        if (sharded) {
            mem.put("ddp_buckets", r.zero == 0 ? grads : Math.min(grads, 1L << 30));
            if (r.zero >= 3) {
                mem.put("zero3_gather", 2 * 2 * p.largestBlockParams);
            }
        }
        long activations = activationBytes(r, b);
        mem.put("activations", activations);
        mem.put("data_batch", dataBytes(r, b));
        if (r.online()) {
            long encoderBytes = r.half() ? 2 : 4;
            long resident = r.vaeOnline() ? r.vae.params() * encoderBytes : 0;
            if (r.textEncoder != null && r.textOnline()) {
                resident += r.textEncoder.params() * encoderBytes;
            }
            mem.put("frozen_encoders", resident);
            // The encoders run under no_grad before the forward pass and free their working memory; the caching
            // allocator hands those blocks to the activations. Only the part above the activations raises the peak.
            mem.put("encoder_transients", Math.max(0, encoderTransientBytes(r, b) - activations));
        }
        long allocated = 0;
        for (long v : mem.values()) {
            allocated += v;
        }
        mem.put("cuda_context", CUDA_CONTEXT_BYTES);
        if (sharded) {
            mem.put("nccl_buffers", NCCL_BYTES);
        }
        mem.put("allocator_overhead", Math.round(allocated * ALLOCATOR_OVERHEAD));
        if (r.factors.memoryFactor() != 1.0) {
            long total = 0;
            for (long v : mem.values()) {
                total += v;
            }
            mem.put("calibration_adjustment", Math.round(total * (r.factors.memoryFactor() - 1.0)));
        }
        return mem;
    }

    private static long activationBytes(Run r, int b) {
        double h = r.profile.info.hidden();
        boolean amp = r.half();
        boolean math = r.attention.equals("math");
        double scoreBytes = (amp && !r.profile.info.attentionUpcast()) ? 2 : 4;
        double textKvBytes = amp ? 2 : 4;
        // Half parameters (ColossalAI/DeepSpeed mixed, pure half): the residual stream and norm inputs that autocast
        // keeps in fp32 are half too.
        boolean halfParams = !r.weights.equals("fp32");
        double halfStream = halfParams ? HALF_STREAM_ACTIVATION_FACTOR : 1;
        double total = 0;
        double live = 0;
        for (int i = 0; i < r.plan.size(); i++) {
            LayerPlan layer = r.plan.get(i);
            int recomputed = r.checkpointed[i];
            int kept = layer.blocks() - recomputed;
            double tokenHidden = (double) layer.tokensPerSample() * b * h;
            double saved = (amp ? layer.savedBytesAmp() * halfStream : layer.savedBytesFp32()) * tokenHidden
                    + layer.textKvBytesPerSample() * b * textKvBytes;
            // Math attention keeps the scores and the softmax output; their gradients double that in backward.
            double scores = math ? layer.attentionScoresPerSample() * b * scoreBytes * 2 : 0;
            if (!math && amp && r.profile.info.attentionUpcast()) {
                saved += UPCAST_ATTENTION_BYTES * tokenHidden;
            }
            if (recomputed > 0) {
                total += recomputed * CHECKPOINT_INPUT_BYTES * (halfParams ? 0.5 : 1) * tokenHidden;
                live = Math.max(live, saved * LIVE_BLOCK_FACTOR + scores * 2);
            }
            if (kept > 0) {
                total += kept * (saved + scores);
                live = Math.max(live, saved * (LIVE_BLOCK_FACTOR - 1) + scores);
            }
        }
        double embedding = EMBEDDING_BYTES * r.tokens * b * h;
        return Math.round(total + live + embedding);
    }

    private static long dataBytes(Run r, int b) {
        ModelInfo m = r.profile.info;
        long images = r.vaeOnline() ? (long) b * 3 * r.pixelsPerSample() * 4
                : (long) b * m.latentChannels() * r.latentFrames * r.spatialTokens * m.patch() * m.patch() * 4;
        long text = m.textEncoder() == null || r.textOnline() ? 0 : (long) b * m.textTokens() * m.captionChannels() * 4;
        return images + text;
    }

    /**
     * Working memory of the frozen encoders for one batch. The VAE's mid-block attention runs through PyTorch 2's
     * scaled-dot-product attention (diffusers' default processor), so it adds no score matrix.
     */
    private static long encoderTransientBytes(Run r, int b) {
        EncoderInfo vae = r.vae;
        double perFrame = (double) r.height * r.width * vae.transientBytesPerPixel()
                * (r.half() ? 1 : FP32_ENCODER_TRANSIENT_FACTOR);
        // Video pipelines encode their frames a few images at a time (Open-Sora's VAE micro_batch_size).
        long images = (long) r.frames * b;
        int micro = r.vaeMicroBatch();
        double bytes = r.vaeOnline() ? perFrame * (micro > 0 ? Math.min(images, micro) : images) : 0;
        if (r.textEncoder != null && r.textOnline()) {
            bytes += (double) b * r.profile.info.textTokens() * r.textEncoder.transientBytesPerToken();
        }
        return Math.round(bytes);
    }

    private static Map<String, Double> stepTime(Run r, int b) {
        ModelInfo m = r.profile.info;
        GpuInfo g = r.gpu;
        double bandwidth = g.bandwidthGbps() * 1e9 * BANDWIDTH_EFFICIENCY;
        double passes = 3 + r.recomputedShare();
        Map<String, Double> t = new LinkedHashMap<>();
        double gemmFlops = 2 * (r.forwardMacsPerSample - r.attentionMacsPerSample) * b * passes;
        double attentionFlops = 2 * r.attentionMacsPerSample * b * passes;
        double compute = gemmFlops / (r.peakTflops() * 1e12 * r.gemmEfficiency())
                + attentionFlops / r.attentionFlopsPerSecond();
        double elementwise = 0;
        double attentionTraffic = 0;
        double scoreBytes = (r.half() && !m.attentionUpcast()) ? 2 : 4;
        for (LayerPlan layer : r.plan) {
            elementwise += layer.blocks() * (double) layer.tokensPerSample() * b * m.hidden()
                    * (r.half() ? ELEMENTWISE_BYTES_AMP : ELEMENTWISE_BYTES_FP32);
            if (r.attention.equals("math")) {
                // Scores and probabilities written and read: 4 passes in forward, 8 in backward.
                attentionTraffic += layer.blocks() * layer.attentionScoresPerSample() * b * scoreBytes * 12;
            }
        }
        t.put("compute", r.accumulation * compute);
        t.put("memory_bound", r.accumulation * passes / 3 * (elementwise + attentionTraffic) / bandwidth);
        if (r.online()) {
            double encoderPeak = r.peakTflops() * 1e12 * r.gemmEfficiency();
            if (r.textEncoder != null && r.textOnline()) {
                double textFlops = 2.0 * r.textEncoder.params() * m.textTokens() * b;
                t.put("text_encoder", r.accumulation * textFlops / encoderPeak);
            }
            EncoderInfo vae = r.vae;
            double perFrame = !r.vaeOnline() ? 0 : (double) r.height * r.width * vae.encoderMacsPerPixel();
            if (vae.midAttentionDownsample() > 0 && r.vaeOnline()) {
                double tokens = (double) r.height * r.width / ((double) vae.midAttentionDownsample() * vae.midAttentionDownsample());
                perFrame += 2 * tokens * tokens * vae.midAttentionWidth();
            }
            double vaeFlops = 2 * perFrame * r.frames * b;
            if (r.vaeOnline()) {
                t.put("vae_encoder", r.accumulation * vaeFlops / r.convFlopsPerSecond());
            }
        }
        int shards = r.zero >= 1 && r.gpus > 1 ? r.gpus : 1;
        t.put("optimizer", r.profile.trainableParams * OPTIMIZER_TRAFFIC.get(r.optimizer) / shards / bandwidth);
        if (r.ema) {
            t.put("ema", r.profile.params * 12.0 / bandwidth);
        }
        if (r.gpus > 1) {
            double interNode = g.architecture().equals("hopper") || g.architecture().equals("blackwell")
                    ? INTER_NODE_ALLREDUCE_GBPS_NDR : INTER_NODE_ALLREDUCE_GBPS;
            double busbw = (r.gpus > GPUS_PER_NODE ? Math.min(g.allreduceGbps(), interNode) : g.allreduceGbps()) * 1e9;
            double gradBytes = r.weights.equals("fp32") ? 4.0 : 2.0;
            double bytes = 2.0 * (r.gpus - 1) / r.gpus * gradBytes * r.profile.trainableParams;
            if (r.zero >= 3) {
                bytes *= 1.5;
            }
            t.put("allreduce", bytes / busbw);
        }
        if (r.factors.stepTimeFactor() != 1.0) {
            double total = 0;
            for (double v : t.values()) {
                total += v;
            }
            t.put("calibration_adjustment", total * (r.factors.stepTimeFactor() - 1.0));
        }
        return t;
    }

    // ---------------------------------------------------------------------------------------------- search

    /** Largest per-GPU batch that fits, by doubling then bisection (memory grows monotonically with the batch). */
    int maxBatch(Run r, Costs atBatch) {
        long capacity = r.gpu.memoryBytes();
        int lo;
        int hi;
        if (atBatch.peakBytes <= capacity) {
            lo = r.batch;
            hi = r.batch * 2;
            while (hi < MAX_BATCH_LIMIT && peakBytes(r, hi) <= capacity) {
                lo = hi;
                hi *= 2;
            }
            if (hi >= MAX_BATCH_LIMIT) {
                return lo; // the largest size checked; beyond this the answer is "more than any real run uses"
            }
        } else {
            if (peakBytes(r, 1) > capacity) {
                return 0;
            }
            lo = 1;
            hi = r.batch;
        }
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            if (peakBytes(r, mid) <= capacity) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    // ---------------------------------------------------------------------------------------------- advice

    private List<Suggestion> suggestions(Run r, Costs base, int maxBatch) {
        List<Suggestion> out = new ArrayList<>();
        String label = optimizerLabel(r.optimizer);
        switch (r.optimizer) {
            case "came", "came8bit", "adafactor" -> add(out, r, base, "use AdamW instead of " + label + " (--optimizer adamw)",
                    r.copy(r.precision, "adamw", r.checkpointing, r.features, r.zero, r.batch, r.accumulation));
            case "adamw" -> {
                add(out, r, base, "use CAME instead of AdamW (--optimizer came)",
                        r.copy(r.precision, "came", r.checkpointing, r.features, r.zero, r.batch, r.accumulation));
                add(out, r, base, "use 8-bit AdamW (--optimizer adamw8bit)",
                        r.copy(r.precision, "adamw8bit", r.checkpointing, r.features, r.zero, r.batch, r.accumulation));
            }
            default -> {
            }
        }
        if (r.optimizer.equals("came")) {
            add(out, r, base, "use 8-bit CAME (--optimizer came8bit)",
                    r.copy(r.precision, "came8bit", r.checkpointing, r.features, r.zero, r.batch, r.accumulation));
        }
        if (r.online()) {
            String what = r.textEncoder != null && r.textOnline() && r.vaeOnline() ? shortName(r.textEncoder) + " and VAE"
                    : r.textEncoder != null && r.textOnline() ? shortName(r.textEncoder) : "VAE";
            add(out, r, base, "precompute " + what + " features (--features precomputed)",
                    r.copy(r.precision, r.optimizer, r.checkpointing, "precomputed", r.zero, r.batch, r.accumulation));
        }
        if (!r.half()) {
            String half = r.gpu.bf16Tflops() != null ? "bf16" : "fp16";
            add(out, r, base, "train in " + half + " mixed precision (--precision " + half + ")",
                    r.copy(half, r.optimizer, r.checkpointing, r.features, r.zero, r.batch, r.accumulation));
            if (r.precision.equals("fp32") && r.gpu.tf32Tflops() != null) {
                add(out, r, base, "enable TF32 matmuls (--precision tf32; torch.backends.cuda.matmul.allow_tf32 = True)",
                        r.copy("tf32", r.optimizer, r.checkpointing, r.features, r.zero, r.batch, r.accumulation));
            }
        }
        if (r.materialisesScores()) {
            add(out, r, base, "use fused attention (--attention flash: xformers or torch SDPA)", r.withAttention("flash"));
        }
        if (!r.checkpointing) {
            add(out, r, base, "enable gradient checkpointing (--grad-checkpointing)",
                    r.copy(r.precision, r.optimizer, true, r.features, r.zero, r.batch, r.accumulation));
        } else if (r.partialCheckpointing()) {
            Run all = r.copy(r.precision, r.optimizer, r.checkpointing, r.features, r.zero, r.batch, r.accumulation);
            for (int i = 0; i < all.plan.size(); i++) {
                all.checkpointed[i] = all.plan.get(i).blocks();
            }
            add(out, r, base, "checkpoint every block (--grad-checkpointing without --checkpoint-blocks)", all);
        }
        if (r.gpus > 1) {
            for (int stage = r.zero + 1; stage <= 3; stage++) {
                add(out, r, base, "shard with ZeRO stage " + stage + " over " + r.gpus + " GPUs (--zero " + stage + ")",
                        r.copy(r.precision, r.optimizer, r.checkpointing, r.features, stage, r.batch, r.accumulation));
            }
        }
        if (maxBatch >= 1 && maxBatch < r.batch) {
            int micro = maxBatch;
            int steps = (r.batch + micro - 1) / micro;
            micro = (r.batch + steps - 1) / steps;
            add(out, r, base, "use batch " + micro + " with " + steps * r.accumulation
                    + " gradient-accumulation steps (same " + r.batch + " samples per GPU per step)",
                    r.copy(r.precision, r.optimizer, r.checkpointing, r.features, r.zero, micro, steps * r.accumulation));
        }
        out.sort(Comparator.comparingLong(Suggestion::savesBytes).reversed()
                .thenComparingDouble(Suggestion::newStepSeconds));
        return List.copyOf(out);
    }

    /** Keeps a change when it saves memory or at least 1% of the step time. */
    private void add(List<Suggestion> out, Run base, Costs baseCosts, String change, Run changed) {
        Costs c = costs(changed, changed.batch);
        long saves = baseCosts.peakBytes - c.peakBytes;
        boolean faster = c.stepSeconds < baseCosts.stepSeconds * 0.99;
        if (saves > 0 || faster) {
            String detail = describeChange(baseCosts, c, saves);
            out.add(new Suggestion(change + ": " + detail, saves, c.peakBytes, c.stepSeconds));
        }
    }

    private static String describeChange(Costs base, Costs changed, long saves) {
        List<String> parts = new ArrayList<>();
        if (saves > 0) {
            parts.add("saves " + gb(saves));
        } else if (saves < 0) {
            parts.add("costs " + gb(-saves) + " more");
        }
        double ratio = changed.stepSeconds / base.stepSeconds;
        if (ratio < 0.99) {
            parts.add(String.format(Locale.ROOT, "%.0f%% less step time", (1 - ratio) * 100));
        } else if (ratio > 1.01) {
            parts.add(String.format(Locale.ROOT, "%.0f%% more step time", (ratio - 1) * 100));
        }
        return String.join(", ", parts);
    }

    private List<String> notes(Run r, Costs c) {
        List<String> notes = new ArrayList<>();
        ModelProfile p = r.profile;
        long capacity = r.gpu.memoryBytes();
        if (c.peakBytes > capacity) {
            notes.add("needs " + gb(c.peakBytes) + " but " + r.gpu.id() + " has " + gb(capacity) + ": expect an out-of-memory error");
        } else if (c.peakBytes > 0.9 * capacity) {
            notes.add("uses " + percent(c.peakBytes, capacity) + " of " + r.gpu.id()
                    + "'s memory: at the limit, fragmentation or a larger aspect-ratio bucket can run out of memory");
        }
        if ((r.optimizer.equals("came") || r.optimizer.equals("came8bit") || r.optimizer.equals("adafactor"))
                && p.pointwiseConvParams > 0) {
            notes.add(optimizerLabel(r.optimizer) + " factors the last two dims of each weight, so the "
                    + millions(p.pointwiseConvParams) + " parameters (" + percent(p.pointwiseConvParams, p.params)
                    + ") in 4-D [O, I, 1, 1] conv weights keep full-size factors: optimizer state "
                    + gb(p.optimizerBytes(r.optimizer)) + " against " + gb(p.optimizerBytes("adamw")) + " for AdamW");
        }
        if (r.online()) {
            double encoders = c.time.getOrDefault("text_encoder", 0.0) + c.time.getOrDefault("vae_encoder", 0.0);
            notes.add(String.format(Locale.ROOT,
                    "online encoders take %.2f s of each %.2f s step (%s): text encoder %.2f s, VAE %.2f s; they also hold %s resident",
                    encoders, c.stepSeconds, percent(encoders, c.stepSeconds), c.time.getOrDefault("text_encoder", 0.0),
                    c.time.getOrDefault("vae_encoder", 0.0), gb(c.memory.getOrDefault("frozen_encoders", 0L))));
            long working = encoderTransientBytes(r, r.batch);
            notes.add("the encoders' working memory (" + gb(working) + " for this batch) is freed before the forward pass "
                    + "and reused for activations; " + (c.memory.getOrDefault("encoder_transients", 0L) > 0
                            ? "it exceeds them, so " + gb(c.memory.get("encoder_transients")) + " of it adds to the peak"
                            : "it fits inside them and adds nothing to the peak"));
        }
        if (r.precision.equals("fp32") && r.gpu.tf32Tflops() != null) {
            notes.add(String.format(Locale.ROOT, "pure fp32 runs at %.1f TFLOPS on %s; TF32 matmuls would use %.0f",
                    r.gpu.fp32Tflops(), r.gpu.id(), r.gpu.tf32Tflops()));
        }
        if (r.attention.equals("math")) {
            long scores = 0;
            for (LayerPlan layer : r.plan) {
                scores = Math.max(scores, Math.round(layer.attentionScoresPerSample()));
            }
            if (scores > 0) {
                notes.add("attention materialises its score matrix (" + millions(scores * r.batch)
                        + " elements per block at this batch); fused flash/SDPA attention avoids it");
            }
        }
        if (r.partialCheckpointing()) {
            List<String> parts = new ArrayList<>();
            for (int i = 0; i < r.plan.size(); i++) {
                parts.add(r.checkpointed[i] + " of " + r.plan.get(i).blocks());
            }
            notes.add("gradient checkpointing recomputes " + String.join(" and ", parts) + " blocks"
                    + (r.plan.size() > 1 ? " (" + Architecture.groupNames(p.info) + ")" : "")
                    + String.format(Locale.ROOT, ": %.0f%% of the forward pass runs twice", 100 * r.recomputedShare()));
        }
        if (r.weights.equals("mixed")) {
            notes.add("half-precision parameters and gradients with an fp32 master copy in the optimizer"
                    + (r.zero >= 1 && r.gpus > 1 ? ", master and optimizer state sharded over " + r.gpus + " GPUs (ZeRO " + r.zero + ")" : ""));
        } else if (r.weights.equals("pure")) {
            notes.add("pure " + r.precision + ": parameters, gradients and optimizer state in " + r.precision
                    + " with no fp32 master copy (small updates can round away)");
        }
        if (r.zero > 0 && r.gpus == 1) {
            notes.add("ZeRO shards over data-parallel ranks; with one GPU it saves nothing");
        }
        if (r.factors.stepTimeFactor() != 1.0 || r.factors.memoryFactor() != 1.0) {
            notes.add(String.format(Locale.ROOT, "calibrated from observed runs on %s/%s: step time x%.2f, memory x%.2f",
                    r.gpu.id(), p.info.family(), r.factors.stepTimeFactor(), r.factors.memoryFactor()));
        }
        return List.copyOf(notes);
    }

    private static String optimizerLabel(String optimizer) {
        return switch (optimizer) {
            case "adamw" -> "AdamW";
            case "adamw8bit" -> "8-bit AdamW";
            case "came" -> "CAME";
            case "came8bit" -> "8-bit CAME";
            case "adafactor" -> "Adafactor";
            default -> "SGD";
        };
    }

    private static String shortName(EncoderInfo encoder) {
        return switch (encoder.id()) {
            case "t5-xxl" -> "T5";
            case "gemma-2-2b" -> "Gemma";
            default -> encoder.name();
        };
    }

    static String gb(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }

    private static String percent(double part, double whole) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * part / whole);
    }

    private static String millions(long n) {
        return String.format(Locale.ROOT, "%.0fM", n / 1e6);
    }
}
