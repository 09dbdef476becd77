package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.EncoderInfo;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Seconds per optimizer step of a run at a batch: the sum of one step's operations (GEMMs by shape and dtype,
 * attention by kernel, element-wise kernels by bytes and launches, online encoders, optimizer, EMA, the exposed
 * all-reduce), each priced on the GPU. The few fitted constants are shared by every architecture; docs/ESTIMATOR.md
 * ("Step time") justifies each. Stateless.
 */
final class StepTimeModel {

    /** Share of the dense tensor peak cuBLAS GEMMs reach on full tiles and waves (the low end of 70–85%: short K). */
    static final double GEMM_EFFICIENCY = 0.70;
    /** Share of the SIMT fp32 peak an fp32 GEMM reaches (no tensor cores: TF32 off, or Volta/Turing). */
    static final double SIMT_EFFICIENCY = 0.80;
    /** Share of the tensor peak fused attention reaches, forward and backward (FlashAttention-2 paper, A100). */
    static final double FLASH_EFFICIENCY = 0.55;
    /** xformers/cutlass memory-efficient attention relative to FlashAttention-2 (FlashAttention-2 paper: 1.5–2x). */
    static final double MEM_EFFICIENT_SHARE = 0.6;
    /** Backward FLOPs of fused attention relative to forward: 5 matmuls (one recomputed) against 2. */
    static final double FUSED_ATTENTION_BACKWARD = 2.5;
    /** Head dims FlashAttention-2 compiles kernels for; others are padded to the next. */
    private static final int[] FLASH_HEAD_DIMS = {32, 64, 96, 128, 160, 192, 224, 256};
    /** Fraction of peak bandwidth element-wise kernels reach. */
    static final double BANDWIDTH_EFFICIENCY = 0.8;
    /** Element-wise traffic of one forward pass over a block per byte it saves for backward (fitted). */
    static final double ELEMENTWISE_BYTES_PER_SAVED_BYTE = 3.5;
    /** Kernels one eager block launches outside its GEMMs and attention, per pass (DiT block forward: about 24). */
    static final int EAGER_KERNELS_PER_BLOCK = 24;
    /** torch.compile fuses them: traffic and launches that remain. */
    static final double COMPILED_TRAFFIC_SHARE = 0.4;
    static final int COMPILED_KERNELS_PER_BLOCK = 8;
    /** Host-side cost of one eager PyTorch operator (dispatch, autograd, launch); a kernel never takes less. */
    static final double EAGER_LAUNCH_SECONDS = 10e-6;
    static final double COMPILED_LAUNCH_SECONDS = 4e-6;
    /** Convolutions (cuDNN implicit GEMM) reach this share of what GEMMs reach. */
    static final double CONV_EFFICIENCY_RATIO = 0.66;
    /** Share of the backward pass a DDP/ZeRO gradient all-reduce can hide under (buckets go as gradients are ready). */
    static final double ALLREDUCE_OVERLAP = 0.8;
    /** Gradient bucket (DDP's 25 MB): the last one is reduced after backward ends. */
    private static final double BUCKET_BYTES = 25e6;
    /** Optimizer step traffic in bytes per trainable parameter (fused, memory-bound): tensors read and written. */
    private static final Map<String, Double> OPTIMIZER_TRAFFIC = Map.of(
            "adamw", 28.0, "adamw8bit", 18.0, "came", 32.0, "came8bit", 22.0, "adafactor", 20.0, "sgd", 16.0,
            "prodigy", 48.0, "lion", 20.0, "lion8bit", 14.0);
    /**
     * GB/s of a multi-node all-reduce: one InfiniBand port per GPU of each generation's reference cluster (EDR, HDR,
     * NDR) at 0.8 of its line rate; docs/ESTIMATOR.md, "All-reduce", says why.
     */
    static double interNodeAllreduceGbps(String architecture) {
        double lineGbps = switch (architecture) {
            case "hopper", "blackwell" -> 400;
            case "ampere", "ada" -> 200;
            default -> 100;
        };
        return INTER_NODE_EFFICIENCY * lineGbps / 8;
    }

    static final double INTER_NODE_EFFICIENCY = 0.8;
    private static final int GPUS_PER_NODE = 8;

    private StepTimeModel() {
    }

    /** Model FLOPs (3 × forward), executed FLOPs (4 × forward under gradient checkpointing) and the dtype's peak. */
    static Estimate.Flops flops(ResolvedRun run) {
        double forward = 2 * run.sizes().forwardMacsPerSample();
        double passes = 3 + run.recomputedShare();
        double peak = peakTflops(run.gpu(), run.precision()) * 1e12;
        return new Estimate.Flops(3 * forward, passes * forward, peak, run.precision());
    }

    private static double peakTflops(GpuInfo g, String precision) {
        return switch (precision) {
            case "fp16" -> g.fp16Tflops();
            case "bf16" -> g.bf16Tflops() != null ? g.bf16Tflops() : g.fp16Tflops();
            case "tf32" -> g.tf32Tflops() != null ? g.tf32Tflops() : g.fp32Tflops();
            default -> g.fp32Tflops();
        };
    }

    /** FLOP/s a GEMM in this dtype reaches on full tiles and waves. */
    private static double gemmRate(GpuInfo g, String precision) {
        boolean simt = precision.equals("fp32") || (precision.equals("tf32") && g.tf32Tflops() == null);
        double share = simt ? SIMT_EFFICIENCY : g.efficiency() > 0 ? g.efficiency() : GEMM_EFFICIENCY;
        return peakTflops(g, precision) * 1e12 * share;
    }

    /** The hardware a run's operations are priced on. */
    record Hw(GpuInfo gpu, int tileM, int tileN, double bandwidth, double launch) {
    }

    /**
     * One GEMM C[M,N] = A[M,K] B[K,N] at the dtype's rate over the share of SMs its tiles keep busy (padding, the last
     * wave, split-K), never faster than moving its operands or than one launch.
     */
    static double gemmSeconds(Hw hw, double m, double n, double k, double rate, double elementBytes) {
        if (m <= 0 || n <= 0 || k <= 0) {
            return 0;
        }
        double utilisation = 1;
        int sms = hw.gpu().sms();
        if (sms > 0) {
            double tilesM = Math.ceil(m / hw.tileM);
            double tilesN = Math.ceil(n / hw.tileN);
            double padding = (m * n) / (tilesM * hw.tileM * tilesN * hw.tileN);
            double tiles = tilesM * tilesN;
            double split = tiles < sms ? Math.max(1, Math.min(Math.floor(sms / tiles), Math.floor(k / 512))) : 1;
            double work = tiles * split;
            double waves = Math.ceil(work / sms);
            utilisation = padding * work / (waves * sms);
        }
        double compute = 2 * m * n * k / (rate * utilisation);
        double memory = (m * k + k * n + m * n) * elementBytes / hw.bandwidth;
        return Math.max(Math.max(compute, memory), hw.launch);
    }

    /**
     * The step's terms under their published keys ({@code compute}, {@code memory_bound}, {@code text_encoder}, …);
     * {@code operations} receives the same seconds by kind of operation: {@code gemm}, {@code attention},
     * {@code elementwise}, {@code recompute} (the forward work gradient checkpointing repeats, already inside the others),
     * the encoders, {@code optimizer}, {@code ema}, {@code allreduce}.
     */
    static Map<String, Double> terms(ResolvedRun r, int b, Map<String, Double> operations) {
        Hw hw = new Hw(r.gpu(), r.arch().tileM(), r.arch().tileN(),
                r.gpu().bandwidthGbps() * 1e9 * BANDWIDTH_EFFICIENCY,
                r.compiled() ? COMPILED_LAUNCH_SECONDS : EAGER_LAUNCH_SECONDS);
        Map<String, Double> t = new LinkedHashMap<>();
        Gemms g = gemms(r, hw, b);
        BlockWork w = blockWork(r, hw, b);
        double gemms = g.gemms();
        double adapters = g.adapters();
        double attention = w.attention();
        double elementwise = w.elementwise();
        // The published breakdown keys: compute (GEMMs and attention) and memory_bound (element-wise kernels).
        t.put("compute", r.accumulation() * (gemms + adapters + attention));
        t.put("memory_bound", r.accumulation() * elementwise);
        operations.put("gemm", r.accumulation() * (gemms + adapters));
        operations.put("attention", r.accumulation() * attention);
        operations.put("elementwise", r.accumulation() * elementwise);

        if (r.online()) {
            if (r.textEncoder() != null && r.textOnline()) {
                t.put("text_encoder", r.accumulation() * textEncoderSeconds(r, hw, b));
            }
            if (r.vaeOnline()) {
                t.put("vae_encoder", r.accumulation() * vaeSeconds(r, hw, b));
            }
        }
        double dequantize = TrainerLevers.dequantizeSeconds(r, hw.bandwidth);
        if (dequantize > 0) {
            t.put("dequantize", dequantize);
        }
        operations.putAll(t);
        operations.remove("compute");
        operations.remove("memory_bound");
        double eagerShare = r.eagerShare();
        if (eagerShare < 1) {
            t.replaceAll((k, v) -> v / eagerShare);
            operations.replaceAll((k, v) -> v / eagerShare);
        }
        // Swapped blocks are copied on their own stream while other blocks compute; only the excess shows.
        double swap = TrainerLevers.exposedSwapSeconds(r,
                r.accumulation() * (gemms + adapters + attention + elementwise) / eagerShare);
        if (swap > 0) {
            t.put("block_swap", swap);
            operations.put("block_swap", swap);
        }
        double backward = r.accumulation() * (gemms * 2 / 3 + attention * 0.7 + elementwise * 2 / 3) / eagerShare;
        perStepTerms(r, hw, backward, t, operations);
        return t;
    }

    /** The optimizer, EMA and all-reduce, then the calibration adjustment over every term. */
    private static void perStepTerms(ResolvedRun r, Hw hw, double backward, Map<String, Double> t,
            Map<String, Double> operations) {
        int shards = r.zero() >= 1 && r.gpus() > 1 ? r.gpus() : 1;
        Map<String, Double> perStep = new LinkedHashMap<>();
        perStep.put("optimizer", r.trainableParams() * OPTIMIZER_TRAFFIC.get(r.optimizer()) / shards / hw.bandwidth);
        if (r.ema()) {
            perStep.put("ema", (r.trainable().full() ? r.profile().params : r.trainableParams()) * 12.0 / hw.bandwidth);
        }
        if (r.gpus() > 1) {
            perStep.put("allreduce", exposedAllreduce(r, backward));
        }
        t.putAll(perStep);
        operations.putAll(perStep);
        if (r.factors().stepTimeFactor() != 1.0) {
            double total = 0;
            for (double v : t.values()) {
                total += v;
            }
            t.put("calibration_adjustment", total * (r.factors().stepTimeFactor() - 1.0));
        }
    }

    private record Gemms(double gemms, double adapters) {
    }

    /** GEMMs of the trained network: forward, input gradient, weight gradient; recomputed blocks run forward twice. */
    private static Gemms gemms(ResolvedRun r, Hw hw, int b) {
        ModelInfo m = r.profile().info;
        double recompute = r.recomputedShare();
        double elementBytes = r.half() ? 2 : 4;
        double rate = gemmRate(r.gpu(), r.precision());
        double gemms = 0;
        double adapters = 0;
        for (Tensor tensor : r.profile().tensors) {
            if (tensor.role() == Tensor.Role.NONE) {
                continue;
            }
            long[] s = tensor.shape();
            boolean depthwise = s.length == 4 && s[1] == 1 && s[2] > 1;
            double rows = switch (tensor.role()) {
                case IMAGE_TOKEN -> r.sizes().tokens();
                case TEXT_TOKEN -> m.textTokens();
                case JOINT_TOKEN -> r.sizes().tokens() + m.textTokens();
                default -> 1;
            };
            double mRows = rows * b;
            double n = s[0];
            double k = tensor.numel() / (double) s[0];
            boolean block = tensor.count() > 1;
            double forwardPasses = 1 + (block ? recompute : 0);
            if (depthwise) {
                // A depthwise 3x3 convolution (Sana's Mix-FFN) moves its input and output: memory-bound.
                double bytes = 2 * mRows * n * elementBytes;
                gemms += tensor.count() * (forwardPasses + 2) * Math.max(bytes / hw.bandwidth, hw.launch);
                continue;
            }
            double forward = gemmSeconds(hw, mRows, n, k, rate, elementBytes);
            double inputGrad = gemmSeconds(hw, mRows, k, n, rate, elementBytes);
            double weightGrad = r.trainable().trainsWeight(tensor) ? gemmSeconds(hw, n, k, mRows, rate, elementBytes) : 0;
            gemms += tensor.count() * (forward * forwardPasses + inputGrad + weightGrad);
            if (r.trainable().adapted(tensor)) {
                // x A^T then (x A^T) B^T, forward and both gradients of each: thin, memory-bound GEMMs.
                double rank = r.trainable().loraRank();
                double one = gemmSeconds(hw, mRows, rank, k, rate, elementBytes) + gemmSeconds(hw, mRows, n, rank, rate, elementBytes);
                adapters += tensor.count() * one * (forwardPasses + 2 + 1);
            }
        }
        return new Gemms(gemms, adapters);
    }

    private record BlockWork(double attention, double elementwise) {
    }

    /** Attention by kernel and the element-wise kernels, per block group. */
    private static BlockWork blockWork(ResolvedRun r, Hw hw, int b) {
        double attention = 0;
        double elementwise = 0;
        int kernelsPerBlock = r.compiled() ? COMPILED_KERNELS_PER_BLOCK : EAGER_KERNELS_PER_BLOCK;
        double trafficShare = r.compiled() ? COMPILED_TRAFFIC_SHARE : 1;
        boolean halfParams = MemoryModel.halfStream(r);
        for (int i = 0; i < r.sizes().plan().size(); i++) {
            LayerPlan layer = r.sizes().plan().get(i);
            if (layer.blocks() == 0) {
                continue; // an MMDiT without single-stream blocks (Stable Diffusion 3's)
            }
            double recomputedBlocks = r.checkpointed(i);
            double passes = layer.blocks() * 3.0 + recomputedBlocks;
            double forwardFlops = 2 * layer.attentionMacsPerSample() * b;
            double perBlock = attentionSeconds(r, hw, layer, forwardFlops, b);
            double forwardShare = r.attention().equals("math") ? 1.0 / 3 : 1 / (1 + FUSED_ATTENTION_BACKWARD);
            attention += perBlock * (layer.blocks() + recomputedBlocks * forwardShare);
            double saved = r.half() ? layer.savedBytesAmp() * (halfParams ? MemoryModel.HALF_STREAM_ACTIVATION_FACTOR : 1)
                    : layer.savedBytesFp32();
            double perPass = ELEMENTWISE_BYTES_PER_SAVED_BYTE * saved * layer.tokensPerSample() * b
                    * r.profile().info.hidden() * trafficShare;
            // One forward pass moves perPass, backward twice that; recomputed blocks run forward again.
            double bytes = perPass * (layer.blocks() * 3.0 + recomputedBlocks);
            double kernels = kernelsPerBlock * passes;
            elementwise += kernels * Math.max(bytes / kernels / hw.bandwidth, hw.launch);
        }
        return new BlockWork(attention, elementwise);
    }

    /** One block's attention (forward, backward and, for recomputed blocks, the caller adds a forward). */
    private static double attentionSeconds(ResolvedRun r, Hw hw, LayerPlan layer, double forwardFlops, int b) {
        if (forwardFlops <= 0) {
            return 0;
        }
        ModelInfo m = r.profile().info;
        GpuInfo g = r.gpu();
        boolean upcast = r.half() && r.attentionFp32();
        if (r.attention().equals("math")) {
            // Two batched GEMMs forward, four backward, plus the score matrix written and read 12 times.
            double rate = upcast ? gemmRate(g, g.tf32Tflops() != null ? "tf32" : "fp32") / 3 * (g.tf32Tflops() != null ? 1 : 3)
                    : gemmRate(g, r.precision());
            double scoreBytes = (r.half() && !upcast) ? 2 : 4;
            double traffic = layer.attentionScoresPerSample() * b * scoreBytes * 12;
            return forwardFlops * 3 / rate + traffic / hw.bandwidth + 8 * hw.launch;
        }
        int headDim = m.architecture().equals("sana") ? m.headDim() : m.hidden() / m.heads();
        double kernelShare = FLASH_EFFICIENCY * headDim / (double) paddedHeadDim(headDim);
        if (r.attention().equals("mem-efficient")) {
            kernelShare *= MEM_EFFICIENT_SHARE;
        }
        double peak;
        if (upcast) {
            // xformers' fp32 kernels: 3xTF32 tensor-core MMAs (a third of the TF32 rate) from Ampere on, SIMT fp32 on
            // Volta and Turing, which have no fp32 or TF32 tensor cores.
            peak = g.tf32Tflops() != null ? g.tf32Tflops() * 1e12 / 3 * r.arch().mmaSyncShare() * kernelShare
                    : g.fp32Tflops() * 1e12 * SIMT_EFFICIENCY;
        } else if (r.precision().equals("fp32") || (r.precision().equals("tf32") && g.tf32Tflops() == null)) {
            peak = g.fp32Tflops() * 1e12 * SIMT_EFFICIENCY; // fp32 SDPA falls back to the efficient SIMT kernel
        } else {
            peak = peakTflops(g, r.precision()) * 1e12 * r.arch().mmaSyncShare() * kernelShare;
        }
        return forwardFlops * (1 + FUSED_ATTENTION_BACKWARD) / peak + 3 * hw.launch;
    }

    private static int paddedHeadDim(int d) {
        for (int supported : FLASH_HEAD_DIMS) {
            if (d <= supported) {
                return supported;
            }
        }
        return d;
    }

    /** The text encoder's GEMMs: 2 × params FLOPs per token, shaped [tokens × batch, width] by [width, width]. */
    private static double textEncoderSeconds(ResolvedRun r, Hw hw, int b) {
        EncoderInfo text = r.textEncoder();
        double tokens = (double) r.profile().info.textTokens() * b;
        double width = Math.max(1, text.hidden());
        double rate = gemmRate(r.gpu(), r.precision());
        double oneLayerGemm = gemmSeconds(hw, tokens, width, width, rate, r.half() ? 2 : 4);
        double equivalentGemms = text.params() / (width * width);
        return oneLayerGemm * equivalentGemms;
    }

    /**
     * The VAE encoder's convolutions and mid-block attention. cuDNN's TF32 switch is on by default, so an fp32 VAE
     * (DiT's scripts encode outside autocast) uses TF32; PixArt, Sana and Open-Sora cast theirs to the training dtype.
     */
    private static double vaeSeconds(ResolvedRun r, Hw hw, int b) {
        EncoderInfo vae = r.vae();
        GpuInfo g = r.gpu();
        double perFrame = (double) r.height() * r.width() * vae.encoderMacsPerPixel();
        if (vae.midAttentionDownsample() > 0) {
            double tokens = (double) r.height() * r.width() / ((double) vae.midAttentionDownsample() * vae.midAttentionDownsample());
            perFrame += 2 * tokens * tokens * vae.midAttentionWidth();
        }
        double flops = 2 * perFrame * r.frames() * b;
        boolean halfVae = r.half() && !r.profile().info.family().equals("dit");
        String dtype = halfVae ? r.precision() : g.tf32Tflops() != null ? "tf32" : "fp32";
        double rate = gemmRate(g, dtype) * (dtype.equals("fp32") ? 1 : CONV_EFFICIENCY_RATIO);
        // Group norms, activations and residuals at every resolution level: the encoder's working memory per pixel,
        // written and read once.
        double traffic = 2.0 * vae.transientBytesPerPixel() * (halfVae ? 1 : 2) * r.height() * r.width() * r.frames() * b;
        return flops / rate + traffic / hw.bandwidth;
    }

    /**
     * A ring all-reduce of the gradients (2(d−1)/d of their bytes) at the node's bus bandwidth, or the network's
     * beyond one node; what the backward pass hides is not paid, the last bucket always is.
     */
    private static double exposedAllreduce(ResolvedRun r, double backwardSeconds) {
        GpuInfo g = r.gpu();
        double interNode = interNodeAllreduceGbps(g.architecture());
        double busbw = (r.gpus() > GPUS_PER_NODE ? Math.min(g.allreduceGbps(), interNode) : g.allreduceGbps()) * 1e9;
        double gradBytes = r.weights().equals("fp32") || r.trainable().lora() ? 4.0 : 2.0;
        double ring = 2.0 * (r.gpus() - 1) / r.gpus();
        double bytes = ring * gradBytes * r.trainableParams();
        if (r.zero() >= 3) {
            bytes *= 1.5;
        }
        double total = bytes / busbw;
        double tail = Math.min(total, ring * BUCKET_BYTES / busbw);
        return Math.max(tail, total - ALLREDUCE_OVERLAP * backwardSeconds);
    }
}
