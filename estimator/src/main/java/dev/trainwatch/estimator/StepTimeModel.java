package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.EncoderInfo;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Seconds per optimizer step of a run at a batch, per term: GEMM FLOPs over the dtype's dense peak times an
 * efficiency, memory-bound element-wise traffic, online encoders, optimizer/EMA updates and the gradient all-reduce.
 * The constants are documented in docs/ESTIMATOR.md. Stateless.
 */
final class StepTimeModel {

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

    private StepTimeModel() {
    }

    /** Model FLOPs (3 × forward), executed FLOPs (4 × forward under gradient checkpointing) and the dtype's peak. */
    static Estimate.Flops flops(ResolvedRun run) {
        double forward = 2 * run.forwardMacsPerSample;
        double passes = 3 + run.recomputedShare();
        return new Estimate.Flops(3 * forward, passes * forward, peakTflops(run) * 1e12, run.precision);
    }

    static double peakTflops(ResolvedRun r) {
        return switch (r.precision) {
            case "fp16" -> r.gpu.fp16Tflops();
            case "bf16" -> r.gpu.bf16Tflops();
            case "tf32" -> r.gpu.tf32Tflops();
            default -> r.gpu.fp32Tflops();
        };
    }

    static double gemmEfficiency(ResolvedRun r) {
        if (r.precision.equals("fp32")) {
            return r.arch.fp32();
        }
        if (r.gpu.efficiency() > 0) {
            return r.gpu.efficiency();
        }
        return r.precision.equals("tf32") ? r.arch.tf32() : r.arch.half();
    }

    private static double tf32Efficiency(ResolvedRun r) {
        return r.gpu.efficiency() > 0 ? r.gpu.efficiency() : r.arch.tf32();
    }

    /**
     * FLOP/s of the attention products (QK^T, AV). Models that upcast attention to fp32 under autocast (PixArt's
     * and Sana's {@code fp32_attention}) run them through xformers' fp32 kernels: 3xTF32 tensor-core MMAs
     * (cutlass {@code OpMultiplyAddFastF32}, a third of the TF32 rate) from Ampere on, plain SIMT fp32 on Volta
     * and Turing, which have no fp32 or TF32 tensor cores.
     */
    private static double attentionFlopsPerSecond(ResolvedRun r) {
        if (r.half() && r.profile.info.attentionUpcast()) {
            return r.gpu.tf32Tflops() != null ? r.gpu.tf32Tflops() * 1e12 * tf32Efficiency(r) / 3
                    : r.gpu.fp32Tflops() * 1e12 * r.arch.fp32();
        }
        return peakTflops(r) * 1e12 * gemmEfficiency(r);
    }

    /**
     * Convolutions go through cuDNN, whose TF32 switch ({@code torch.backends.cudnn.allow_tf32}) is on by
     * default: an fp32 run's image encoder uses TF32 tensor cores even when matmuls do not.
     */
    private static double convFlopsPerSecond(ResolvedRun r) {
        boolean tf32 = (r.precision.equals("fp32") || r.precision.equals("tf32")) && r.gpu.tf32Tflops() != null;
        double peak = tf32 ? r.gpu.tf32Tflops() * tf32Efficiency(r) : peakTflops(r) * gemmEfficiency(r);
        return peak * 1e12 * CONV_EFFICIENCY_RATIO;
    }

    static Map<String, Double> terms(ResolvedRun r, int b) {
        ModelInfo m = r.profile.info;
        GpuInfo g = r.gpu;
        double bandwidth = g.bandwidthGbps() * 1e9 * BANDWIDTH_EFFICIENCY;
        double passes = 3 + r.recomputedShare();
        Map<String, Double> t = new LinkedHashMap<>();
        double gemmFlops = 2 * (r.forwardMacsPerSample - r.attentionMacsPerSample) * b * passes;
        double attentionFlops = 2 * r.attentionMacsPerSample * b * passes;
        double compute = gemmFlops / (peakTflops(r) * 1e12 * gemmEfficiency(r))
                + attentionFlops / attentionFlopsPerSecond(r);
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
            double encoderPeak = peakTflops(r) * 1e12 * gemmEfficiency(r);
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
                t.put("vae_encoder", r.accumulation * vaeFlops / convFlopsPerSecond(r));
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
}
