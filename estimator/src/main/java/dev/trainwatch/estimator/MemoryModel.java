package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.EncoderInfo;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * Peak device memory of a run at a batch, per term, as NVML would show it: PyTorch's accounting under DDP/accelerate
 * plus the caching allocator's overhead; half parameters and ZeRO shards change the terms. Constants in
 * docs/ESTIMATOR.md. Stateless.
 */
final class MemoryModel {

    /** CUDA context, cuBLAS/cuDNN workspaces and kernels loaded by PyTorch. */
    static final long CUDA_CONTEXT_BYTES = 800_000_000L;
    /** NCCL communicator buffers on multi-GPU runs. */
    static final long NCCL_BYTES = 400_000_000L;
    /** Reserved/allocated ratio of PyTorch's caching allocator is 1.1–1.2; this is the excess. */
    static final double ALLOCATOR_OVERHEAD = 0.15;
    /** Checkpointed blocks keep their fp32 residual input: bytes per token per hidden unit. */
    static final double CHECKPOINT_INPUT_BYTES = 4;
    /** Saved tensors with half parameters relative to autocast (its fp32 residual and norms become half). */
    static final double HALF_STREAM_ACTIVATION_FACTOR = 0.8;
    /** While a block recomputes and back-propagates, its saved tensors plus their gradients are live. */
    static final double LIVE_BLOCK_FACTOR = 1.5;
    /** fp32 inputs and outputs of the patch embedding, final layer and loss per token per hidden unit. */
    static final double EMBEDDING_BYTES = 16;
    /** Bytes per token per hidden unit of the fp32 q, k, v and output kept for backward under {@code fp32_attention}. */
    static final double UPCAST_ATTENTION_BYTES = 8;
    /** Encoder working memory outside autocast (fp32 convolution outputs), relative to AMP: fast-DiT's two runs. */
    static final double FP32_ENCODER_TRANSIENT_FACTOR = 1.25;

    private static final int MAX_BATCH_LIMIT = 1 << 20;

    private MemoryModel() {
    }

    /** Peak bytes only: the bisection for the largest batch calls this. */
    static long peakBytes(ResolvedRun r, int batch) {
        return TrainerLevers.sum(terms(r, batch));
    }

    /** Largest per-GPU batch that fits, by doubling then bisection (memory grows monotonically with the batch). */
    static int maxBatch(ResolvedRun r, long peakAtBatch) {
        long capacity = r.gpu().memoryBytes();
        int lo;
        int hi;
        if (peakAtBatch <= capacity) {
            lo = r.batch();
            hi = r.batch() * 2;
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
            hi = r.batch();
        }
        return bisect(lo, hi, batch -> peakBytes(r, batch) > capacity) - 1;
    }

    /** The least n in (lo, hi] for which {@code holds}, given it holds at hi, not at lo, and onwards once it does. */
    static int bisect(int lo, int hi, IntPredicate holds) {
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            if (holds.test(mid)) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        return hi;
    }

    static Map<String, Long> terms(ResolvedRun r, int b) {
        ModelProfile p = r.profile();
        int d = r.gpus();
        boolean sharded = d > 1;
        Map<String, Long> mem = new LinkedHashMap<>();
        boolean fp32Params = r.weights().equals("fp32");
        Trainable tr = r.trainable();
        long trainable = tr.trainableParams();
        long weights = TrainerLevers.weightBytes(r);
        // Blocks kept in pinned host memory (blocks_to_swap) are on the GPU only while they run.
        weights -= TrainerLevers.swappedBytes(r, weights);
        mem.put("weights", r.zero() >= 3 && sharded ? weights / d : weights);
        if (r.half() && fp32Params) {
            // Autocast caches a half copy of each fp32 weight it casts until the forward pass ends.
            long cast = tr.lora() ? tr.adapterParams() : p.trainableParams;
            mem.put("autocast_cache", (r.zero() >= 3 && sharded ? 2 * cast / d : 2 * cast));
        }
        long grads = (fp32Params || tr.lora() ? 4 : 2) * trainable;
        mem.put("gradients", r.zero() >= 2 && sharded ? grads / d : grads);
        if (r.weights().equals("mixed")) {
            // ColossalAI / DeepSpeed / FSDP mixed precision: the optimizer holds an fp32 master copy, sharded with it.
            long master = 4 * trainable;
            mem.put("master_weights", r.zero() >= 1 && sharded ? master / d : master);
        }
        long optimizer = tr.optimizerBytes(r.optimizer());
        if (r.weights().equals("pure")) {
            optimizer /= 2; // states kept in the parameters' half dtype
        }
        mem.put("optimizer", r.zero() >= 1 && sharded ? optimizer / d : optimizer);
        if (r.ema()) {
            mem.put("ema", 4 * (tr.full() ? p.params : trainable));
        }
        if (sharded) {
            mem.put("ddp_buckets", r.zero() == 0 ? grads : Math.min(grads, 1L << 30));
            if (r.zero() >= 3) {
                mem.put("zero3_gather", 2 * 2 * p.largestBlockParams);
            }
        }
        long activations = activationBytes(r, b);
        mem.put("activations", activations);
        mem.put("data_batch", dataBytes(r, b));
        if (r.online()) {
            long encoderBytes = r.half() ? 2 : 4;
            long resident = r.vaeOnline() ? r.vae().params() * encoderBytes : 0;
            if (r.textEncoder() != null && r.textOnline()) {
                resident += r.textEncoder().params() * encoderBytes;
            }
            mem.put("frozen_encoders", resident);
            // The encoders run under no_grad before the forward pass and free their working memory; the caching
            // allocator hands those blocks to the activations. Only the part above the activations raises the peak.
            mem.put("encoder_transients", Math.max(0, encoderTransientBytes(r, b) - activations));
        }
        long allocated = TrainerLevers.sum(mem);
        mem.put("cuda_context", CUDA_CONTEXT_BYTES);
        if (sharded) {
            mem.put("nccl_buffers", NCCL_BYTES);
        }
        mem.put("allocator_overhead", allocatorOverhead(r, allocated));
        if (r.factors().memoryFactor() != 1.0) {
            mem.put("calibration_adjustment", Math.round(TrainerLevers.sum(mem) * (r.factors().memoryFactor() - 1.0)));
        }
        return mem;
    }

    /**
     * The caching allocator's slack over {@code allocated} bytes. A frozen base is allocated once, in blocks of its own
     * size: the slack grows with what is allocated and freed every step, not with it.
     */
    static long allocatorOverhead(ResolvedRun r, long allocated) {
        Trainable tr = r.trainable();
        long frozenBase = tr.full() ? 0 : TrainerLevers.frozenBytes(r, tr.frozenParams(), r.half() ? 2 : 4)
                - TrainerLevers.swappedBytes(r, TrainerLevers.weightBytes(r));
        return Math.round(Math.max(0, allocated - Math.max(0, frozenBase)) * ALLOCATOR_OVERHEAD);
    }

    private static long activationBytes(ResolvedRun r, int b) {
        double h = r.profile().info.hidden();
        boolean amp = r.half();
        boolean math = r.attention().equals("math");
        double scoreBytes = (amp && !r.attentionFp32()) ? 2 : 4;
        double textKvBytes = amp ? 2 : 4;
        // Half parameters (ColossalAI/DeepSpeed mixed, pure half): the residual stream and norm inputs that autocast
        // keeps in fp32 are half too.
        boolean halfParams = halfStream(r);
        double halfStream = halfParams ? HALF_STREAM_ACTIVATION_FACTOR : 1;
        double total = 0;
        double live = 0;
        for (int i = 0; i < r.sizes().plan().size(); i++) {
            LayerPlan layer = r.sizes().plan().get(i);
            int recomputed = r.checkpointed(i);
            int kept = layer.blocks() - recomputed;
            double tokenHidden = (double) layer.tokensPerSample() * b * h;
            double saved = (amp ? layer.savedBytesAmp() * halfStream : layer.savedBytesFp32()) * tokenHidden
                    + layer.textKvBytesPerSample() * b * textKvBytes;
            // Math attention keeps the scores and the softmax output; their gradients double that in backward.
            double scores = math ? layer.attentionScoresPerSample() * b * scoreBytes * 2 : 0;
            if (!math && amp && r.attentionFp32()) {
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
        double embedding = EMBEDDING_BYTES * r.sizes().tokens() * b * h;
        return Math.round(total + live + embedding);
    }

    /** The residual stream is half: half parameters, or a LoRA under autocast (trainers cast the frozen base). */
    static boolean halfStream(ResolvedRun r) {
        return !r.weights().equals("fp32") || (r.trainable().lora() && r.half());
    }

    private static long dataBytes(ResolvedRun r, int b) {
        ModelInfo m = r.profile().info;
        long images = r.vaeOnline() ? (long) b * 3 * r.height() * r.width() * r.frames() * 4
                : (long) b * m.latentChannels() * r.sizes().latentFrames() * r.sizes().spatialTokens() * m.patch() * m.patch() * 4;
        long text = m.textEncoder() == null || r.textOnline() ? 0 : (long) b * m.textTokens() * m.captionChannels() * 4;
        return images + text;
    }

    /** Working memory of the frozen encoders for one batch (the VAE's attention through SDPA: no score matrix). */
    static long encoderTransientBytes(ResolvedRun r, int b) {
        EncoderInfo vae = r.vae();
        double perFrame = (double) r.height() * r.width() * vae.transientBytesPerPixel()
                * (r.half() ? 1 : FP32_ENCODER_TRANSIENT_FACTOR);
        // Video pipelines encode their frames a few images at a time (Open-Sora's VAE micro_batch_size).
        long images = (long) r.frames() * b;
        int micro = r.vaeMicroBatch();
        double bytes = r.vaeOnline() ? perFrame * (micro > 0 ? Math.min(images, micro) : images) : 0;
        if (r.textEncoder() != null && r.textOnline()) {
            bytes += (double) b * r.profile().info.textTokens() * r.textEncoder().transientBytesPerToken();
        }
        return Math.round(bytes);
    }
}
