package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.EncoderInfo;
import java.util.ArrayList;
import java.util.List;

/** Every change the estimator prices, as {@link Lever}s: the one place to add one; {@link Plans} prices them. */
final class Levers {

    private Levers() {
    }

    /** The levers that apply to {@code r}, keeping its GPU count; {@code maxBatch} is its largest batch that fits. */
    static List<Lever> candidates(ResolvedRun r, int maxBatch) {
        List<Lever> out = new ArrayList<>();
        optimizer(r, out);
        if (r.online()) {
            String what = r.textEncoder() != null && r.textOnline() && r.vaeOnline() ? shortName(r.textEncoder()) + " and VAE"
                    : r.textEncoder() != null && r.textOnline() ? shortName(r.textEncoder()) : "VAE";
            out.add(new Lever("features", "precompute " + what + " features", "--features precomputed",
                    "encoding on the fly (a one-off encoding pass, disk for the features, fixed augmentations)", 2, b -> b.features = "precomputed"));
        }
        precision(r, out);
        if (r.materialisesScores()) {
            out.add(new Lever("attention", "use fused attention", "--attention flash: xformers or torch SDPA", null, 0,
                    b -> b.attention = "flash"));
        }
        if (r.half() && r.attentionFp32()) {
            out.add(new Lever("attention_precision", "run attention in half precision",
                    "--attention-precision half; fp32_attention=False", "the fp32 softmax of attention", 1,
                    b -> b.attentionFp32 = false));
        }
        checkpointing(r, out);
        if (r.ema()) {
            out.add(new Lever("ema", "drop the EMA copy from the GPU", "--no-ema",
                    "the EMA weights on the GPU (keep them on the CPU, or update them every N steps)", 2, b -> b.ema = false));
        }
        if (r.gpus() > 1) {
            for (int stage = r.zero() + 1; stage <= 3; stage++) {
                int s = stage;
                out.add(new Lever("zero", "shard with ZeRO stage " + stage + " over " + r.gpus() + " GPUs",
                        "--zero " + stage, "some step time to the extra communication", 0, b -> b.zero = s));
            }
        }
        if (r.half() && r.weights().equals("fp32") && !r.trainable().lora()) {
            out.add(new Lever("weights", "keep half-precision parameters with fp32 master weights in the optimizer",
                    "--weights mixed: DeepSpeed, ColossalAI or FSDP mixed precision",
                    "fp32 parameters on the GPU (needs DeepSpeed, ColossalAI or FSDP mixed precision)", 2,
                    b -> b.weights = "mixed"));
        }
        trainerLevers(r, out);
        accumulation(r, maxBatch, out);
        return out;
    }

    /** The LoRA trainers' levers: the frozen base in fp8, and the fewest blocks to swap that make the run fit. */
    private static void trainerLevers(ResolvedRun r, List<Lever> out) {
        if (r.trainable().full()) {
            return;
        }
        if (r.baseWeights() == null || TrainerLevers.matrixBytes(r.baseWeights()) > 1) {
            out.add(new Lever("base_weights", "store the frozen base weights in fp8", "--base-weights fp8",
                    "bf16 storage of the frozen base (fp8 rounds its weights)", 1, b -> b.baseWeights = "fp8"));
        }
        int blocks = fewestBlocksToSwap(r);
        if (blocks > r.blocksToSwap()) {
            ResolvedRun changed = swapping(r, blocks);
            String host = Units.gb(TrainerLevers.swappedBytes(changed, TrainerLevers.weightBytes(changed)));
            out.add(new Lever("blocks_to_swap", "swap " + blocks + " blocks to pinned host memory",
                    "--blocks-to-swap " + blocks + "; " + host + " of host memory",
                    "step time to the PCIe copies it cannot hide, and " + host + " of pinned host memory", 2,
                    b -> b.blocksToSwap = blocks));
        }
    }

    /** The fewest blocks kept in host memory with which the run fits; the run's own count when none does or it fits. */
    private static int fewestBlocksToSwap(ResolvedRun r) {
        long capacity = r.gpu().memoryBytes();
        if (MemoryModel.peakBytes(r, r.batch()) <= capacity) {
            return r.blocksToSwap();
        }
        int lo = r.blocksToSwap();
        int hi = TrainerLevers.maxBlocksToSwap(r.profile());
        if (hi <= lo || MemoryModel.peakBytes(swapping(r, hi), r.batch()) > capacity) {
            return r.blocksToSwap();
        }
        // Memory falls as more blocks are swapped.
        return MemoryModel.bisect(lo, hi, blocks -> MemoryModel.peakBytes(swapping(r, blocks), r.batch()) <= capacity);
    }

    private static ResolvedRun swapping(ResolvedRun r, int blocks) {
        return r.with(b -> b.blocksToSwap = blocks);
    }

    private static void optimizer(ResolvedRun r, List<Lever> out) {
        String label = Advice.optimizerLabel(r.optimizer());
        String retune = "the optimizer you tuned (retune the learning rate)";
        switch (r.optimizer()) {
            case "came", "came8bit", "adafactor" -> out.add(new Lever("optimizer", "use AdamW instead of " + label,
                    "--optimizer adamw", retune, 3, b -> b.optimizer = "adamw"));
            case "adamw" -> {
                out.add(new Lever("optimizer", "use CAME instead of AdamW", "--optimizer came", retune, 3,
                        b -> b.optimizer = "came"));
                out.add(new Lever("optimizer", "use 8-bit AdamW", "--optimizer adamw8bit",
                        "full-precision optimizer state (bitsandbytes 8-bit)", 1, b -> b.optimizer = "adamw8bit"));
            }
            default -> {
            }
        }
        if (r.optimizer().equals("came")) {
            out.add(new Lever("optimizer", "use 8-bit CAME", "--optimizer came8bit", "full-precision optimizer state (8-bit CAME)", 1,
                    b -> b.optimizer = "came8bit"));
        }
    }

    private static void precision(ResolvedRun r, List<Lever> out) {
        if (r.half()) {
            return;
        }
        String half = r.gpu().bf16Tflops() != null ? "bf16" : "fp16";
        out.add(new Lever("precision", "train in " + half + " mixed precision", "--precision " + half,
                "fp32 numerics in the matmuls", 1, b -> b.precision = half));
        if (r.precision().equals("fp32") && r.gpu().tf32Tflops() != null) {
            out.add(new Lever("precision", "enable TF32 matmuls",
                    "--precision tf32; torch.backends.cuda.matmul.allow_tf32 = True", "full fp32 matmul precision", 1,
                    b -> b.precision = "tf32"));
        }
    }

    private static void checkpointing(ResolvedRun r, List<Lever> out) {
        String recompute = "one forward pass per step (checkpointed blocks run it twice)";
        if (!r.checkpointing()) {
            out.add(new Lever("checkpointing", "enable gradient checkpointing", "--grad-checkpointing", recompute, 0,
                    b -> b.checkpointing(true)));
        } else if (r.partialCheckpointing()) {
            int[] all = r.sizes().plan().stream().mapToInt(LayerPlan::blocks).toArray();
            out.add(new Lever("checkpointing", "checkpoint every block",
                    "--grad-checkpointing without --checkpoint-blocks", recompute, 0, b -> b.checkpointed = all));
        }
    }

    private static void accumulation(ResolvedRun r, int maxBatch, List<Lever> out) {
        if (maxBatch < 1 || maxBatch >= r.batch()) {
            return;
        }
        int steps = (r.batch() + maxBatch - 1) / maxBatch;
        int micro = (r.batch() + steps - 1) / steps;
        int accumulation = steps * r.accumulation();
        out.add(new Lever("batch", "use batch " + micro + " with " + accumulation
                + " gradient-accumulation steps (same " + r.batch() + " samples per GPU per step)",
                "--batch " + micro + " --grad-accumulation " + accumulation, null, 0, b -> b.batch(micro, accumulation)));
    }

    static String shortName(EncoderInfo encoder) {
        return switch (encoder.id()) {
            case "t5-xxl" -> "T5";
            case "gemma-2-2b" -> "Gemma";
            default -> encoder.name();
        };
    }
}
