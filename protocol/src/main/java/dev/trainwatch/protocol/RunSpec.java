package dev.trainwatch.protocol;

import java.util.List;

/**
 * What a training run is, as far as cost is concerned: the input of the estimator and the body of
 * {@code PUT /v1/runs/{run_id}}. Every field is optional on the wire (null = "not said"); the estimator fills
 * defaults and reports the resolved spec back. Immutable and thread-safe.
 *
 * @param model             model id from the catalog, e.g. {@code pixart-sigma-xl-2}
 * @param gpu               GPU id or NVML device name, e.g. {@code a100-80gb} or {@code NVIDIA A100-SXM4-80GB}
 * @param gpus              data-parallel size (number of GPUs the batch is replicated over)
 * @param batch             samples per GPU per micro-step
 * @param resolution        square image side in pixels (ignored when height and width are given)
 * @param height            image height in pixels
 * @param width             image width in pixels
 * @param frames            video frames (video models only)
 * @param precision         {@code fp32}, {@code tf32}, {@code fp16} or {@code bf16}
 * @param optimizer         {@code adamw}, {@code adamw8bit}, {@code came}, {@code came8bit}, {@code adafactor}, {@code sgd}
 * @param gradCheckpointing full activation recomputation
 * @param ema               an fp32 EMA copy of the weights is kept on the GPU
 * @param features          {@code online} (text/VAE encoders run every step) or {@code precomputed}
 * @param zero              ZeRO stage 0–3 (3 also stands for FSDP full sharding)
 * @param attention         {@code flash} (fused/SDPA) or {@code math}
 * @param gradAccumulation  micro-steps per optimizer step
 * @param totalSteps        planned number of steps (for ETA and total time)
 * @param textFeatures      {@code online} or {@code precomputed} for the text encoder alone (overrides {@code features})
 * @param vaeFeatures       {@code online} or {@code precomputed} for the VAE alone (overrides {@code features})
 * @param weights           {@code fp32} (under autocast; the default), {@code mixed} (half with fp32 master weights:
 *                          ColossalAI, DeepSpeed, FSDP) or {@code pure} (all half, no master copy)
 * @param checkpointBlocks  blocks recomputed in backward, one number per block group or one for all in forward
 *                          order; overrides {@code gradCheckpointing}
 * @param vaeMicroBatch     images (frames) the video VAE encodes at once (Open-Sora's {@code micro_batch_size})
 * @param buckets           frames x resolution buckets the run trains on (the largest's memory, the mean step)
 * @param kernels           {@code eager} (the default) or {@code compiled} ({@code torch.compile}, fused kernels)
 * @param attentionPrecision {@code fp32} (upcast under autocast, {@code fp32_attention}) or {@code half}; null: the model's
 * @param loraRank          LoRA rank: the base weights are frozen and rank-r adapters on {@code loraTargets} train
 * @param loraTargets       module kinds with adapters (without a rank: the kinds trained), e.g. {@code attention},
 *                          {@code mlp}, {@code modulation}; null: attention (with a rank) or everything
 * @param images            images (samples) per epoch: with {@code epochs}, the total steps from the global batch
 * @param epochs            passes over {@code images}
 * @param baseWeights       storage of frozen base weights ({@code bf16}, {@code fp16}, {@code fp8}, {@code int8},
 *                          {@code int4}, {@code nf4}: kohya's {@code --fp8_base}); null: the compute precision
 * @param blocksToSwap      blocks kept in pinned host memory, streamed each step ({@code blocks_to_swap}); 0: none
 * @param notes             what the spec's source (a trainer's config or command line) said that could not be mapped,
 *                          one line each; shown on the run, never priced
 * @param sampleEvery       steps between the trainer's sampling (validation) passes, when its config says it samples
 */
public record RunSpec(
        String model,
        String gpu,
        Integer gpus,
        Integer batch,
        Integer resolution,
        Integer height,
        Integer width,
        Integer frames,
        String precision,
        String optimizer,
        Boolean gradCheckpointing,
        Boolean ema,
        String features,
        Integer zero,
        String attention,
        Integer gradAccumulation,
        Long totalSteps,
        String textFeatures,
        String vaeFeatures,
        String weights,
        List<Integer> checkpointBlocks,
        Integer vaeMicroBatch,
        List<Bucket> buckets,
        String kernels,
        String attentionPrecision,
        Integer loraRank,
        List<String> loraTargets,
        Long images,
        Double epochs,
        String baseWeights,
        Integer blocksToSwap,
        List<String> notes,
        Integer sampleEvery) {

    /** The core fields only: the later ones (regime, physics, trainer, notes) stay unsaid. */
    public RunSpec(String model, String gpu, Integer gpus, Integer batch, Integer resolution, Integer height,
            Integer width, Integer frames, String precision, String optimizer, Boolean gradCheckpointing, Boolean ema,
            String features, Integer zero, String attention, Integer gradAccumulation, Long totalSteps) {
        this(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer, gradCheckpointing, ema,
                features, zero, attention, gradAccumulation, totalSteps, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null);
    }

    /**
     * One frames x resolution bucket of a multi-bucket run (Open-Sora's {@code bucket_config}).
     *
     * @param height pixels
     * @param width  pixels
     * @param frames video frames (1 for images)
     * @param batch  samples per GPU in this bucket
     * @param weight share of the steps spent in this bucket (any positive scale; normalised)
     */
    public record Bucket(Integer height, Integer width, Integer frames, Integer batch, Double weight) {
    }

    /** The same spec with the regime fields replaced (null leaves a field unsaid). */
    public RunSpec withRegime(String textFeatures, String vaeFeatures, String weights,
            List<Integer> checkpointBlocks, Integer vaeMicroBatch, List<Bucket> buckets) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks == null ? null : List.copyOf(checkpointBlocks),
                vaeMicroBatch, buckets == null ? null : List.copyOf(buckets), kernels, attentionPrecision,
                loraRank, loraTargets, images, epochs, baseWeights, blocksToSwap, notes, sampleEvery);
    }

    /** The same spec with the physics fields replaced (null leaves a field unsaid). */
    public RunSpec withPhysics(String kernels, String attentionPrecision, Integer loraRank,
            List<String> loraTargets, Long images, Double epochs) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks, vaeMicroBatch, buckets, kernels, attentionPrecision, loraRank,
                loraTargets == null ? null : List.copyOf(loraTargets), images, epochs, baseWeights,
                blocksToSwap, notes, sampleEvery);
    }

    /** The same spec with the trainer fields replaced (null leaves a field unsaid). */
    public RunSpec withTrainer(String baseWeights, Integer blocksToSwap) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks, vaeMicroBatch, buckets, kernels, attentionPrecision, loraRank,
                loraTargets, images, epochs, baseWeights, blocksToSwap, notes, sampleEvery);
    }

    /**
     * The same spec with its features computed {@code online} or {@code precomputed} for every encoder (the
     * per-encoder fields left unsaid), as {@code --features} sets it.
     */
    public RunSpec withFeatures(String newFeatures) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, newFeatures, zero, attention, gradAccumulation, totalSteps, null, null, weights,
                checkpointBlocks, vaeMicroBatch, buckets, kernels, attentionPrecision, loraRank, loraTargets, images,
                epochs, baseWeights, blocksToSwap, notes, sampleEvery);
    }

    /** The same spec on another GPU, GPU count and per-GPU batch (null keeps a field). */
    public RunSpec onHardware(String gpu, Integer gpus, Integer batch) {
        return new RunSpec(model, gpu != null ? gpu : this.gpu, gpus != null ? gpus : this.gpus,
                batch != null ? batch : this.batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks, vaeMicroBatch, batch != null ? null : buckets, kernels,
                attentionPrecision, loraRank, loraTargets, images, epochs, baseWeights, blocksToSwap, notes,
                sampleEvery);
    }

    /** The same spec with another batch, size and frames (one bucket of a multi-bucket run). */
    public RunSpec withShape(Integer batch, Integer resolution, Integer height, Integer width, Integer frames) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks, vaeMicroBatch, buckets, kernels, attentionPrecision, loraRank,
                loraTargets, images, epochs, baseWeights, blocksToSwap, notes, sampleEvery);
    }

    /** The same spec with these notes (null or empty: none). */
    public RunSpec withNotes(List<String> newNotes) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks, vaeMicroBatch, buckets, kernels, attentionPrecision, loraRank,
                loraTargets, images, epochs, baseWeights, blocksToSwap,
                newNotes == null || newNotes.isEmpty() ? null : List.copyOf(newNotes), sampleEvery);
    }

    /** The same spec with the steps between sampling passes (null: unsaid). */
    public RunSpec withSampling(Integer newSampleEvery) {
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps, textFeatures,
                vaeFeatures, weights, checkpointBlocks, vaeMicroBatch, buckets, kernels, attentionPrecision, loraRank,
                loraTargets, images, epochs, baseWeights, blocksToSwap, notes, newSampleEvery);
    }

    public static RunSpec empty() {
        return new RunSpec(null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
    }

    /** Fields of {@code override} that are set replace those of this spec (flags over a config file). */
    public RunSpec overriddenBy(RunSpec override) {
        if (override == null) {
            return this;
        }
        return new RunSpec(
                pick(override.model, model),
                pick(override.gpu, gpu),
                pick(override.gpus, gpus),
                pick(override.batch, batch),
                pick(override.resolution, resolution),
                pick(override.height, override.resolution != null ? null : height),
                pick(override.width, override.resolution != null ? null : width),
                pick(override.frames, frames),
                pick(override.precision, precision),
                pick(override.optimizer, optimizer),
                pick(override.gradCheckpointing, gradCheckpointing),
                pick(override.ema, ema),
                pick(override.features, features),
                pick(override.zero, zero),
                pick(override.attention, attention),
                pick(override.gradAccumulation, gradAccumulation),
                pick(override.totalSteps, totalSteps),
                pick(override.textFeatures, override.features != null ? null : textFeatures),
                pick(override.vaeFeatures, override.features != null ? null : vaeFeatures),
                pick(override.weights, weights),
                pick(override.checkpointBlocks, override.gradCheckpointing != null ? null : checkpointBlocks),
                pick(override.vaeMicroBatch, vaeMicroBatch),
                pick(override.buckets, override.batch != null || override.resolution != null || override.height != null
                        || override.frames != null ? null : buckets),
                pick(override.kernels, kernels),
                pick(override.attentionPrecision, attentionPrecision),
                pick(override.loraRank, loraRank),
                pick(override.loraTargets, loraTargets),
                pick(override.images, images),
                pick(override.epochs, epochs),
                pick(override.baseWeights, baseWeights),
                pick(override.blocksToSwap, blocksToSwap),
                pick(override.notes, notes),
                pick(override.sampleEvery, sampleEvery));
    }

    private static <T> T pick(T preferred, T fallback) {
        return preferred != null ? preferred : fallback;
    }
}
