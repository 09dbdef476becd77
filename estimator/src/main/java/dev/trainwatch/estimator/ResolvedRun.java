package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.ArchitectureInfo;
import dev.trainwatch.estimator.catalog.EncoderInfo;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.IntStream;

/**
 * A run with every choice resolved and checked, and the sizes derived from them (tokens, block groups, forward MACs).
 * Built only by {@link SpecResolver} and by copies ({@link #toBuilder()}); never change {@link #checkpointed}.
 *
 * @param squareResolution the square side when the spec gave one (the resolved spec echoes it), else null
 * @param features         online, precomputed, or one of the split states below
 * @param weights          fp32, mixed (half params + fp32 master in the optimizer) or pure (all half)
 * @param vaeMicroBatchSetting images the VAE encodes at once when the spec says; null: the pipeline default
 * @param kernels          {@code eager} or {@code compiled}
 * @param attentionFp32    attention computed in fp32 under autocast (PixArt's and Sana's {@code fp32_attention})
 * @param trainable        what trains: everything, some module kinds, or LoRA adapters
 * @param checkpointed     blocks recomputed per layer group of {@link Sizes#plan}
 * @param baseWeights      storage of the frozen base weights ({@link TrainerLevers#BASE_WEIGHTS}); null: compute dtype
 * @param blocksToSwap     transformer blocks kept in pinned host memory and streamed each pass; 0: none
 */
record ResolvedRun(ModelProfile profile, GpuInfo gpu, ArchitectureInfo arch, EncoderInfo textEncoder, EncoderInfo vae,
                   int gpus, int batch, int height, int width, int frames, Integer squareResolution, String precision,
                   String optimizer, boolean checkpointing, boolean ema, String features, int zero, String attention,
                   int accumulation, Long totalSteps, String weights, Integer vaeMicroBatchSetting,
                   Calibration.Factors factors, String kernels, boolean attentionFp32, Trainable trainable,
                   int[] checkpointed, String baseWeights, int blocksToSwap, Sizes sizes) {

    /** Run-internal feature states when one encoder's output is read from disk and the other's is computed. */
    static final String TEXT_PRECOMPUTED = "text-precomputed";
    static final String VAE_PRECOMPUTED = "vae-precomputed";

    /** The sizes a run's shape gives: tokens per sample, the block groups and the forward MACs. */
    record Sizes(long latentFrames, long spatialTokens, long tokens, List<LayerPlan> plan,
                 double forwardMacsPerSample) {

        static Sizes of(ModelProfile profile, int frames, int height, int width) {
            ModelInfo m = profile.info;
            long temporal = Math.max(1, m.temporalDownsample());
            long latent = m.video() ? (frames + temporal - 1) / temporal : 1;
            long latentFrames = Math.max(1, latent / Math.max(1, m.patchT()));
            long grid = m.pixelsPerToken();
            long spatialTokens = (height / grid) * (width / grid);
            long tokens = latentFrames * spatialTokens;
            List<LayerPlan> plan = Architecture.plan(m, latentFrames, spatialTokens);
            double macs = (double) profile.imageTokenWeights * tokens
                    + (double) profile.textTokenWeights * m.textTokens()
                    + (double) profile.jointTokenWeights * (tokens + m.textTokens())
                    + profile.sampleWeights;
            double attentionMacs = 0;
            for (LayerPlan layer : plan) {
                attentionMacs += layer.blocks() * layer.attentionMacsPerSample();
            }
            return new Sizes(latentFrames, spatialTokens, tokens, plan, macs + attentionMacs);
        }
    }

    /** A builder holding this run's choices, to price a copy with one of them changed. */
    Builder toBuilder() {
        Builder b = new Builder(profile);
        b.gpu = gpu;
        b.arch = arch;
        b.textEncoder = textEncoder;
        b.vae = vae;
        b.gpus = gpus;
        b.batch(batch, accumulation);
        b.height = height;
        b.width = width;
        b.frames = frames;
        b.squareResolution = squareResolution;
        b.precision = precision;
        b.optimizer = optimizer;
        b.checkpointing = checkpointing;
        b.ema = ema;
        b.features = features;
        b.zero = zero;
        b.attention = attention;
        b.totalSteps = totalSteps;
        b.weights = weights;
        b.vaeMicroBatch = vaeMicroBatchSetting;
        b.factors = factors;
        b.kernels = kernels;
        b.attentionFp32 = attentionFp32;
        b.trainable = trainable;
        b.checkpointed = checkpointed.clone();
        b.baseWeights = baseWeights;
        b.blocksToSwap = blocksToSwap;
        return b;
    }

    /** A copy of this run with {@code edit} made to its choices. */
    ResolvedRun with(Consumer<Builder> edit) {
        Builder b = toBuilder();
        edit.accept(b);
        return b.build();
    }

    /** Blocks recomputed in group {@code i} of {@link #plan}. */
    int checkpointed(int i) {
        return checkpointed[i];
    }

    /** Share of the blocks' forward work recomputed in backward (0 none, 1 full checkpointing). */
    double recomputedShare() {
        double all = 0;
        double recomputed = 0;
        for (int i = 0; i < sizes.plan().size(); i++) {
            LayerPlan layer = sizes.plan().get(i);
            double perBlock = layer.tokensPerSample() + layer.attentionMacsPerSample() / Math.max(1, profile.info.hidden()) / 12.0;
            all += layer.blocks() * perBlock;
            recomputed += checkpointed[i] * perBlock;
        }
        return all == 0 ? 0 : recomputed / all;
    }

    boolean partialCheckpointing() {
        List<LayerPlan> plan = sizes.plan();
        return checkpointing && IntStream.range(0, plan.size()).anyMatch(i -> checkpointed[i] != plan.get(i).blocks());
    }

    boolean textOnline() {
        return features.equals("online") || features.equals(VAE_PRECOMPUTED);
    }

    boolean vaeOnline() {
        return features.equals("online") || features.equals(TEXT_PRECOMPUTED);
    }

    int vaeMicroBatch() {
        return vaeMicroBatchSetting != null ? vaeMicroBatchSetting : profile.info.vaeMicroBatch();
    }

    long trainableParams() {
        return trainable.trainableParams();
    }

    boolean compiled() {
        return kernels.equals("compiled");
    }

    /** The share of the priced rate the run's operations reach: 1 when compiled, else the architecture's eager share. */
    double eagerShare() {
        if (compiled()) {
            return 1;
        }
        double share = weights.equals("mixed") ? arch.mixedEagerShare() : arch.eagerShare();
        return share > 0 && share < 1 ? share : 1;
    }

    boolean materialisesScores() {
        return attention.equals("math") && sizes.plan().stream().anyMatch(layer -> layer.attentionScoresPerSample() > 0);
    }

    boolean half() {
        return precision.equals("fp16") || precision.equals("bf16");
    }

    /** Some encoder runs every step. */
    boolean online() {
        return !features.equals("precomputed");
    }

    RunSpec resolvedSpec() {
        boolean split = features.equals(TEXT_PRECOMPUTED) || features.equals(VAE_PRECOMPUTED);
        List<Integer> partial = partialCheckpointing() ? Arrays.stream(checkpointed).boxed().toList() : null;
        return new RunSpec(profile.info.id(), gpu.id(), gpus, batch, squareResolution,
                squareResolution == null ? height : null, squareResolution == null ? width : null,
                profile.info.video() ? frames : null, precision, optimizer, checkpointing, ema,
                online() ? "online" : "precomputed", zero, attention, accumulation, totalSteps,
                split ? (textOnline() ? "online" : "precomputed") : null,
                split ? (vaeOnline() ? "online" : "precomputed") : null,
                weights, partial, profile.info.video() ? vaeMicroBatch() : null, null, kernels,
                attentionFp32 ? "fp32" : "half", trainable.lora() ? trainable.loraRank() : null,
                trainable.full() ? null : List.copyOf(trainable.targets()), null, null, baseWeights,
                blocksToSwap > 0 ? blocksToSwap : null, null, null);
    }

    /** Mutable choices of a run; {@link #build()} derives the sizes and freezes them. Not thread-safe. */
    static final class Builder {
        private final ModelProfile profile;
        GpuInfo gpu;
        ArchitectureInfo arch;
        EncoderInfo textEncoder;
        EncoderInfo vae;
        int gpus = 1;
        int batch = 1;
        int height;
        int width;
        int frames = 1;
        Integer squareResolution;
        String precision = "fp32";
        String optimizer = "adamw";
        boolean checkpointing;
        boolean ema;
        String features = "precomputed";
        int zero;
        String attention = "flash";
        int accumulation = 1;
        Long totalSteps;
        String weights = "fp32";
        Integer vaeMicroBatch;
        Calibration.Factors factors = Calibration.Factors.IDENTITY;
        String kernels = "eager";
        /** Null: the model's default. */
        Boolean attentionFp32;
        /** Null: everything trains. */
        Trainable trainable;
        /** Null: all blocks or none, as {@link #checkpointing} says. */
        int[] checkpointed;
        /** Null: frozen weights in the compute dtype. */
        String baseWeights;
        int blocksToSwap;

        Builder(ModelProfile profile) {
            this.profile = profile;
        }

        /** Turning checkpointing on or off recomputes all blocks or none. */
        Builder checkpointing(boolean v) {
            if (v != checkpointing) {
                checkpointed = null;
            }
            checkpointing = v;
            return this;
        }

        Builder batch(int b, int accumulationSteps) {
            batch = b;
            accumulation = accumulationSteps;
            return this;
        }

        ResolvedRun build() {
            Sizes sizes = Sizes.of(profile, frames, height, width);
            List<LayerPlan> plan = sizes.plan();
            int[] blocks = checkpointed != null && checkpointed.length == plan.size() ? checkpointed.clone()
                    : plan.stream().mapToInt(layer -> checkpointing ? layer.blocks() : 0).toArray();
            return new ResolvedRun(profile, gpu, arch, textEncoder, vae, gpus, batch, height, width, frames,
                    squareResolution, precision, optimizer, checkpointing, ema, features, zero, attention, accumulation,
                    totalSteps, weights, vaeMicroBatch, factors, kernels,
                    attentionFp32 != null ? attentionFp32 : profile.info.attentionUpcast(),
                    trainable != null ? trainable : profile.all, blocks, baseWeights, blocksToSwap, sizes);
        }
    }
}
