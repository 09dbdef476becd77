package dev.trainwatch.estimator;

import java.util.ArrayList;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How today's LoRA trainers (kohya, musubi-tuner, ai-toolkit, SimpleTuner, OneTrainer, diffusion-pipe) fit 12–20B
 * models on 24 GB cards, priced: quantised frozen base weights, swapped blocks, host memory and the sampling phase.
 * Constants in docs/ESTIMATOR.md. Stateless.
 */
final class TrainerLevers {

    /** Storage formats of frozen base weights, as {@code --base-weights} names them. */
    static final List<String> BASE_WEIGHTS = List.of("bf16", "fp16", "fp8", "int8", "int4", "nf4");
    /** Share of PCIe x16's per-direction rate a pinned host-to-device copy reaches (bandwidthTest: ~25 of 32 GB/s). */
    static final double PINNED_COPY_EFFICIENCY = 0.8;
    /** Host memory of a CUDA PyTorch training process before any model (libraries, Python, loader workers). */
    static final long PROCESS_RUNTIME_BYTES = 3_000_000_000L;
    /** Live bytes of one block's no-grad forward per token per hidden unit in 16-bit (residual, q/k/v, out, MLP). */
    static final double INFERENCE_BYTES = 28;
    /** A VAE decoder's working memory relative to its encoder's, per output pixel. */
    static final double DECODER_TRANSIENT_FACTOR = 1;

    private TrainerLevers() {
    }

    /**
     * The canonical base-weights name for what users and trainers write ({@code float8}, {@code fp8_e4m3fn},
     * {@code qfloat8}, {@code int8-quanto}, {@code nf4-bnb}, …); null when it is not one.
     */
    static String normalizeBaseWeights(String raw) {
        String s = raw.strip().toLowerCase(Locale.ROOT).replace('_', '-');
        if (s.startsWith("fp8") || s.startsWith("float8") || s.equals("qfloat8") || s.equals("e4m3fn")) {
            return "fp8";
        }
        return switch (s) {
            case "bf16", "bfloat16" -> "bf16";
            case "fp16", "float16", "half" -> "fp16";
            case "int8", "qint8", "int8-quanto", "int8-torchao", "uint8" -> "int8";
            case "int4", "qint4", "int4-quanto", "int4-torchao", "uint4" -> "int4";
            case "nf4", "nf4-bnb", "nfloat4", "bnb-nf4" -> "nf4";
            default -> null;
        };
    }

    /** Bytes per quantised weight element, with int4's per-128 scale and shift and NF4's double-quantised absmax. */
    static double matrixBytes(String baseWeights) {
        return switch (baseWeights) {
            case "fp8", "int8" -> 1;
            case "int4" -> 0.5 + 4.0 / 128;
            case "nf4" -> 0.5 + 0.127 / 8;
            default -> 2;
        };
    }

    /**
     * Bytes of the frozen weights on the GPU before any block is swapped out. Trainers quantise the matrices of the
     * transformer (Linear weights); norms, biases and tables stay in the compute dtype.
     *
     * @param plainBytes bytes per frozen parameter when no base storage is given
     */
    static long frozenBytes(ResolvedRun r, long frozenParams, double plainBytes) {
        if (r.baseWeights() == null) {
            return Math.round(frozenParams * plainBytes);
        }
        double matrixShare = (double) r.profile().matrixParams / r.profile().params;
        double perParam = matrixShare * matrixBytes(r.baseWeights()) + (1 - matrixShare) * 2;
        return Math.round(frozenParams * perParam);
    }

    /** The weights term's bytes that {@code blocks_to_swap} keeps in host memory instead. */
    static long swappedBytes(ResolvedRun r, long weightBytes) {
        if (r.blocksToSwap() <= 0 || r.profile().blocks == 0) {
            return 0;
        }
        double perParam = (double) weightBytes / r.profile().params;
        return Math.round(swappedParams(r.profile(), r.blocksToSwap()) * perParam);
    }

    /**
     * Parameters of {@code n} swapped blocks. For an MMDiT with single-stream blocks, kohya's and musubi's unit is a
     * double-stream block or two single-stream ones: {@code n / 2} double and {@code (n - n / 2) * 2} single blocks
     * move, each group keeping two on the GPU (Flux: at most 35). Other models swap {@code n} of their blocks.
     */
    static double swappedParams(ModelProfile p, int n) {
        ModelInfo m = p.info;
        if (m.architecture().equals("mmdit") && m.singleDepth() > 0) {
            int doubles = n / 2;
            int singles = (n - doubles) * 2;
            return doubles * blockParams(p, "double_blocks") + singles * blockParams(p, "single_blocks");
        }
        return n * (double) p.allBlockParams / p.blocks;
    }

    /** The most blocks a trainer lets {@code blocks_to_swap} move (two of each group stay on the GPU). */
    static int maxBlocksToSwap(ModelProfile p) {
        ModelInfo m = p.info;
        if (m.architecture().equals("mmdit") && m.singleDepth() > 0) {
            int n = 0;
            while ((n + 1) / 2 <= m.depth() - 2 && (n + 1 - (n + 1) / 2) * 2 <= m.singleDepth() - 2) {
                n++;
            }
            return n;
        }
        return Math.max(0, p.blocks - 1);
    }

    /** Parameters of one block of a group: its tensors are listed once with the group's depth as their count. */
    private static double blockParams(ModelProfile p, String prefix) {
        return p.tensors.stream().filter(t -> t.name().startsWith(prefix)).mapToLong(Tensor::numel).sum();
    }

    /** Seconds per step the GPU spends turning quantised weights back into the compute dtype (memory-bound). */
    static double dequantizeSeconds(ResolvedRun r, double bandwidth) {
        if (r.baseWeights() == null || matrixBytes(r.baseWeights()) >= 2) {
            return 0;
        }
        // Each use of a weight dequantises it: forward, the input gradient in backward, and recomputed blocks again.
        double passes = 2 + r.recomputedShare();
        double bytes = r.profile().matrixParams * (matrixBytes(r.baseWeights()) + 2);
        return r.accumulation() * passes * bytes / bandwidth;
    }

    /** Bytes crossing PCIe per step with block swap: each swapped block in for forward and again for backward. */
    static double swapBytesPerStep(ResolvedRun r) {
        return 2.0 * r.accumulation() * swappedBytes(r, weightBytes(r));
    }

    /** Seconds of block-swap copies per step at the pinned PCIe rate; 0 without swap or a known PCIe rate. */
    static double swapCopySeconds(ResolvedRun r) {
        double bytes = swapBytesPerStep(r);
        return bytes <= 0 || r.gpu().pcieGbps() <= 0 ? 0 : bytes / (r.gpu().pcieGbps() * 1e9 * PINNED_COPY_EFFICIENCY);
    }

    /** Step seconds block swap adds: the copies overlap the compute, so only what it cannot hide shows. */
    static double exposedSwapSeconds(ResolvedRun r, double computeSeconds) {
        return Math.max(0, swapCopySeconds(r) - computeSeconds);
    }

    /** The weights term as {@link MemoryModel} counts it before swapping (LoRA base, partial or full fine-tune). */
    static long weightBytes(ResolvedRun r) {
        Trainable tr = r.trainable();
        ModelProfile p = r.profile();
        boolean fp32Params = r.weights().equals("fp32");
        if (tr.lora()) {
            // LoRA scripts (diffusers/PEFT, kohya, Sana) cast the frozen base to the training dtype and keep the
            // adapters in fp32.
            return frozenBytes(r, p.params, r.half() ? 2 : 4) + 4 * tr.adapterParams();
        }
        if (r.baseWeights() != null && !tr.full()) {
            return (fp32Params ? 4 : 2) * tr.trainableParams() + frozenBytes(r, tr.frozenParams(), fp32Params ? 4 : 2);
        }
        return (fp32Params ? 4 : 2) * p.params;
    }

    /**
     * Host memory of the training process: its runtime, the pinned copies of the swapped blocks, and the loading
     * phase (16-bit checkpoint, its quantised copy, the text encoder) beyond what stays pinned.
     */
    static Map<String, Long> hostTerms(ResolvedRun r) {
        Map<String, Long> host = new LinkedHashMap<>();
        host.put("process_runtime", PROCESS_RUNTIME_BYTES);
        long pinned = swappedBytes(r, weightBytes(r));
        if (pinned > 0) {
            host.put("pinned_swap_blocks", pinned);
        }
        // At start the 16-bit checkpoint is read, quantised beside itself, and the text encoder is loaded to encode
        // (or cache) the captions: the peak of the load, beyond what later stays pinned.
        long load = 2 * r.profile().params + (r.textEncoder() == null ? 0 : 2 * r.textEncoder().params());
        if (r.baseWeights() != null && matrixBytes(r.baseWeights()) < 2) {
            load += frozenBytes(r, r.profile().params, 2);
        }
        host.put("checkpoint_load", Math.max(0, load - pinned));
        return host;
    }

    /**
     * The sampling phase's device memory: the training state stays (gradients and activations freed) while the pipeline
     * runs one sample at the training size without gradients (two with CFG) and decodes it with the VAE.
     */
    static Map<String, Long> samplingTerms(ResolvedRun r, Map<String, Long> training) {
        Map<String, Long> s = new LinkedHashMap<>();
        for (String keep : List.of("weights", "master_weights", "optimizer", "ema", "ddp_buckets", "frozen_encoders")) {
            if (training.containsKey(keep)) {
                s.put(keep, training.get(keep));
            }
        }
        int cfg = r.profile().info.guidanceEmbed() ? 1 : 2;
        long joint = r.sizes().tokens() + r.profile().info.textTokens();
        s.put("sampling_activations", Math.round(INFERENCE_BYTES * cfg * joint * r.profile().info.hidden()));
        long frames = Math.min(r.frames(), Math.max(1, r.vae().temporalDownsample()));
        s.put("vae_decode", Math.round(DECODER_TRANSIENT_FACTOR * r.vae().transientBytesPerPixel() * r.height() * r.width()
                * frames));
        long allocated = sum(s);
        s.put("cuda_context", MemoryModel.CUDA_CONTEXT_BYTES);
        s.put("allocator_overhead", MemoryModel.allocatorOverhead(r, allocated));
        return s;
    }

    /** {@code notes} plus one when training fits but sampling does not: the run would die at its first sample. */
    static List<String> withSamplingNote(List<String> notes, ResolvedRun r, long trainingPeak, long samplingPeak) {
        long capacity = r.gpu().memoryBytes();
        if (trainingPeak > capacity || samplingPeak <= capacity) {
            return notes;
        }
        List<String> out = new ArrayList<>(notes);
        out.add("training fits, but sampling needs " + Units.gb(samplingPeak) + " of the " + Units.gb(capacity)
                + ": the run would run out of memory at its first sample; sample at a smaller size or fewer frames, or"
                + " turn sampling off");
        return List.copyOf(out);
    }

    static long sum(Map<String, Long> terms) {
        return terms.values().stream().mapToLong(Long::longValue).sum();
    }
}
