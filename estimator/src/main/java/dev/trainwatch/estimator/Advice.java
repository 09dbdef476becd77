package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Units.gb;
import static dev.trainwatch.estimator.Units.millions;
import static dev.trainwatch.estimator.Units.percent;

import dev.trainwatch.estimator.catalog.EncoderInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What to tell the user beside the numbers: the single changes that help (each re-priced with the same models) and
 * the notes that explain the numbers. Stateless.
 */
final class Advice {

    private Advice() {
    }

    static List<Suggestion> suggestions(ResolvedRun r, Costs base, int maxBatch) {
        List<Suggestion> out = new ArrayList<>();
        String label = optimizerLabel(r.optimizer);
        switch (r.optimizer) {
            case "came", "came8bit", "adafactor" -> add(out, base, "use AdamW instead of " + label + " (--optimizer adamw)",
                    r.toBuilder().optimizer("adamw").build());
            case "adamw" -> {
                add(out, base, "use CAME instead of AdamW (--optimizer came)", r.toBuilder().optimizer("came").build());
                add(out, base, "use 8-bit AdamW (--optimizer adamw8bit)", r.toBuilder().optimizer("adamw8bit").build());
            }
            default -> {
            }
        }
        if (r.optimizer.equals("came")) {
            add(out, base, "use 8-bit CAME (--optimizer came8bit)", r.toBuilder().optimizer("came8bit").build());
        }
        if (r.online()) {
            String what = r.textEncoder != null && r.textOnline() && r.vaeOnline() ? shortName(r.textEncoder) + " and VAE"
                    : r.textEncoder != null && r.textOnline() ? shortName(r.textEncoder) : "VAE";
            add(out, base, "precompute " + what + " features (--features precomputed)",
                    r.toBuilder().features("precomputed").build());
        }
        if (!r.half()) {
            String half = r.gpu.bf16Tflops() != null ? "bf16" : "fp16";
            add(out, base, "train in " + half + " mixed precision (--precision " + half + ")",
                    r.toBuilder().precision(half).build());
            if (r.precision.equals("fp32") && r.gpu.tf32Tflops() != null) {
                add(out, base, "enable TF32 matmuls (--precision tf32; torch.backends.cuda.matmul.allow_tf32 = True)",
                        r.toBuilder().precision("tf32").build());
            }
        }
        if (r.materialisesScores()) {
            add(out, base, "use fused attention (--attention flash: xformers or torch SDPA)",
                    r.toBuilder().attention("flash").build());
        }
        if (!r.checkpointing) {
            add(out, base, "enable gradient checkpointing (--grad-checkpointing)", r.toBuilder().checkpointing(true).build());
        } else if (r.partialCheckpointing()) {
            int[] all = new int[r.plan.size()];
            for (int i = 0; i < all.length; i++) {
                all[i] = r.plan.get(i).blocks();
            }
            add(out, base, "checkpoint every block (--grad-checkpointing without --checkpoint-blocks)",
                    r.toBuilder().checkpointed(all).build());
        }
        if (r.gpus > 1) {
            for (int stage = r.zero + 1; stage <= 3; stage++) {
                add(out, base, "shard with ZeRO stage " + stage + " over " + r.gpus + " GPUs (--zero " + stage + ")",
                        r.toBuilder().zero(stage).build());
            }
        }
        if (r.half() && r.weights.equals("fp32") && !r.trainable.lora()) {
            add(out, base, "keep half-precision parameters with fp32 master weights in the optimizer (--weights mixed:"
                    + " DeepSpeed, ColossalAI or FSDP mixed precision)", r.toBuilder().weights("mixed").build());
        }
        trainerLevers(out, r, base);
        if (base.peakBytes() > r.gpu.memoryBytes()) {
            scaleOut(out, r, base);
        }
        if (maxBatch >= 1 && maxBatch < r.batch) {
            int micro = maxBatch;
            int steps = (r.batch + micro - 1) / micro;
            micro = (r.batch + steps - 1) / steps;
            add(out, base, "use batch " + micro + " with " + steps * r.accumulation
                    + " gradient-accumulation steps (same " + r.batch + " samples per GPU per step)",
                    r.toBuilder().batch(micro, steps * r.accumulation).build());
        }
        out.sort(Comparator.comparingLong(Suggestion::savesBytes).reversed()
                .thenComparingDouble(Suggestion::newStepSeconds));
        return List.copyOf(out);
    }

    /**
     * The levers of LoRA trainers: store the frozen base in fp8 (kohya's and musubi's {@code --fp8_base}, ai-toolkit's
     * {@code quantize}); and when the run does not fit, the fewest blocks to swap to host memory that make it fit.
     */
    private static void trainerLevers(List<Suggestion> out, ResolvedRun r, Costs base) {
        if (r.trainable.full()) {
            return;
        }
        if (r.baseWeights == null || TrainerLevers.matrixBytes(r.baseWeights) > 1) {
            add(out, base, "store the frozen base weights in fp8 (--base-weights fp8)",
                    r.toBuilder().baseWeights("fp8").build());
        }
        if (base.peakBytes() <= r.gpu.memoryBytes()) {
            return;
        }
        // Memory falls as more blocks are swapped: bisect for the fewest that fit.
        int lo = r.blocksToSwap;
        int hi = TrainerLevers.maxBlocksToSwap(r.profile);
        if (hi <= lo || MemoryModel.peakBytes(r.toBuilder().blocksToSwap(hi).build(), r.batch) > r.gpu.memoryBytes()) {
            return;
        }
        while (hi - lo > 1) {
            int mid = (lo + hi) >>> 1;
            if (MemoryModel.peakBytes(r.toBuilder().blocksToSwap(mid).build(), r.batch) <= r.gpu.memoryBytes()) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        ResolvedRun changed = r.toBuilder().blocksToSwap(hi).build();
        add(out, base, "swap " + hi + " blocks to pinned host memory (--blocks-to-swap " + hi + "; "
                + gb(TrainerLevers.swappedBytes(changed, TrainerLevers.weightBytes(changed))) + " of host memory)", changed);
    }

    /**
     * When the run does not fit, the fewest GPUs (8, 16, … 512) on which each way of sharding fits: ZeRO-2 and ZeRO-3,
     * each with the run's weights and, under half precision, with half parameters and fp32 master weights.
     */
    private static void scaleOut(List<Suggestion> out, ResolvedRun r, Costs base) {
        List<String> weightsOptions = new ArrayList<>(List.of(r.weights));
        if (r.half() && !r.weights.equals("mixed") && !r.trainable.lora()) {
            weightsOptions.add("mixed");
        }
        for (int stage = Math.max(2, r.zero); stage <= 3; stage++) {
            for (String weights : weightsOptions) {
                for (int gpus = Math.max(8, nextPowerOfTwo(r.gpus * 2)); gpus <= 512; gpus *= 2) {
                    ResolvedRun changed = r.toBuilder().gpus(gpus).zero(stage).weights(weights).build();
                    Costs c = Costs.of(changed, changed.batch);
                    if (c.peakBytes() <= r.gpu.memoryBytes()) {
                        String flags = "--gpus " + gpus + " --zero " + stage + (weights.equals(r.weights) ? "" : " --weights " + weights);
                        out.add(new Suggestion("train on " + gpus + " GPUs with ZeRO stage " + stage
                                + (weights.equals(r.weights) ? "" : " and " + weights + " weights") + " (" + flags + "): "
                                + describeChange(base, c, base.peakBytes() - c.peakBytes()) + ", " + gb(c.peakBytes())
                                + " per GPU", base.peakBytes() - c.peakBytes(), c.peakBytes(), c.stepSeconds()));
                        break;
                    }
                }
            }
        }
    }

    private static int nextPowerOfTwo(int n) {
        int p = 1;
        while (p < n && p < (1 << 20)) {
            p <<= 1;
        }
        return p;
    }

    /** Keeps a change when it saves memory or at least 1% of the step time. */
    private static void add(List<Suggestion> out, Costs baseCosts, String change, ResolvedRun changed) {
        Costs c = Costs.of(changed, changed.batch);
        long saves = baseCosts.peakBytes() - c.peakBytes();
        boolean faster = c.stepSeconds() < baseCosts.stepSeconds() * 0.99;
        if (saves > 0 || faster) {
            String detail = describeChange(baseCosts, c, saves);
            out.add(new Suggestion(change + ": " + detail, saves, c.peakBytes(), c.stepSeconds()));
        }
    }

    private static String describeChange(Costs base, Costs changed, long saves) {
        List<String> parts = new ArrayList<>();
        if (saves > 0) {
            parts.add("saves " + gb(saves));
        } else if (saves < 0) {
            parts.add("costs " + gb(-saves) + " more");
        }
        double ratio = changed.stepSeconds() / base.stepSeconds();
        if (ratio < 0.99) {
            parts.add(String.format(Locale.ROOT, "%.0f%% less step time", (1 - ratio) * 100));
        } else if (ratio > 1.01) {
            parts.add(String.format(Locale.ROOT, "%.0f%% more step time", (ratio - 1) * 100));
        }
        return String.join(", ", parts);
    }

    static List<String> notes(ResolvedRun r, Costs c) {
        List<String> notes = new ArrayList<>();
        ModelProfile p = r.profile;
        long capacity = r.gpu.memoryBytes();
        if (c.peakBytes() > capacity) {
            notes.add("needs " + gb(c.peakBytes()) + " but " + r.gpu.id() + " has " + gb(capacity) + ": expect an out-of-memory error");
        } else if (c.peakBytes() > 0.9 * capacity) {
            notes.add("uses " + percent(c.peakBytes(), capacity) + " of " + r.gpu.id()
                    + "'s memory: at the limit, fragmentation or a larger aspect-ratio bucket can run out of memory");
        }
        blockSwapNote(r, c, notes);
        if ((r.optimizer.equals("came") || r.optimizer.equals("came8bit") || r.optimizer.equals("adafactor"))
                && p.pointwiseConvParams > 0) {
            notes.add(optimizerLabel(r.optimizer) + " factors the last two dims of each weight, so the "
                    + millions(p.pointwiseConvParams) + " parameters (" + percent(p.pointwiseConvParams, p.params)
                    + ") in 4-D [O, I, 1, 1] conv weights keep full-size factors: optimizer state "
                    + gb(r.trainable.optimizerBytes(r.optimizer)) + " against " + gb(r.trainable.optimizerBytes("adamw")) + " for AdamW");
        }
        onlineEncoderNotes(r, c, notes);
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
                parts.add(r.checkpointed(i) + " of " + r.plan.get(i).blocks());
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
        if (r.eagerShare() < 1) {
            notes.add(r.weights.equals("mixed")
                    ? String.format(Locale.ROOT, "eager PyTorch with half parameters and fp32 master weights on %s (%s) is"
                            + " priced at %.0f%% of its datasheet rates, as the published eager runs of that regime on"
                            + " Hopper measured (Open-Sora and OpenDiT on ColossalAI's booster); --kernels compiled prices"
                            + " the full rates, and --from-run anchors on a run you observed", r.gpu.id(),
                            r.gpu.architecture(), 100 * r.eagerShare())
                    : String.format(Locale.ROOT, "eager PyTorch on %s (%s) is priced at %.0f%% of its datasheet rates, as"
                            + " the one published A100/H100 pair of an eager autocast stack measured (the H100 1.56x the"
                            + " A100); --kernels compiled prices the full rates, and --from-run anchors on a run you"
                            + " observed", r.gpu.id(), r.gpu.architecture(), 100 * r.eagerShare()));
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

    /** What the online encoders cost each step and where their working memory goes. */
    private static void onlineEncoderNotes(ResolvedRun r, Costs c, List<String> notes) {
        if (!r.online()) {
            return;
        }
        double encoders = c.time().getOrDefault("text_encoder", 0.0) + c.time().getOrDefault("vae_encoder", 0.0);
        notes.add(String.format(Locale.ROOT,
                "online encoders take %.2f s of each %.2f s step (%s): text encoder %.2f s, VAE %.2f s; they also hold %s resident",
                encoders, c.stepSeconds(), percent(encoders, c.stepSeconds()), c.time().getOrDefault("text_encoder", 0.0),
                c.time().getOrDefault("vae_encoder", 0.0), gb(c.memory().getOrDefault("frozen_encoders", 0L))));
        long working = MemoryModel.encoderTransientBytes(r, r.batch);
        notes.add("the encoders' working memory (" + gb(working) + " for this batch) is freed before the forward pass "
                + "and reused for activations; " + (c.memory().getOrDefault("encoder_transients", 0L) > 0
                        ? "it exceeds them, so " + gb(c.memory().get("encoder_transients")) + " of it adds to the peak"
                        : "it fits inside them and adds nothing to the peak"));
    }

    /**
     * The step's largest terms (at least 5% of it, at most four), largest first, each with the single change that
     * would save most of it and what that saves, re-priced: "fp32 attention: 6.60 s of 12.20 s; half-precision
     * attention would save 5.90 s".
     */
    static List<String> why(ResolvedRun r, Costs c) {
        List<Map.Entry<String, Double>> terms = new ArrayList<>(c.operations().entrySet());
        terms.sort(Map.Entry.<String, Double>comparingByValue().reversed());
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Double> term : terms) {
            if (out.size() == 4 || term.getValue() < 0.05 * c.stepSeconds()) {
                break;
            }
            String change = null;
            ResolvedRun changed = null;
            String k = term.getKey();
            switch (k) {
                case "attention" -> {
                    if (r.half() && r.attentionFp32) {
                        change = "half-precision attention (fp32_attention=False; --attention-precision half)";
                        changed = r.toBuilder().attentionFp32(false).build();
                    } else if (r.attention.equals("math")) {
                        change = "fused attention (--attention flash)";
                        changed = r.toBuilder().attention("flash").build();
                    } else if (r.attention.equals("mem-efficient")) {
                        change = "FlashAttention-2 / SDPA flash (--attention flash)";
                        changed = r.toBuilder().attention("flash").build();
                    }
                }
                case "elementwise" -> {
                    if (!r.compiled()) {
                        change = "torch.compile (--kernels compiled)";
                        changed = r.toBuilder().kernels("compiled").build();
                    }
                }
                case "gemm" -> {
                    if (!r.half()) {
                        String half = r.gpu.bf16Tflops() != null ? "bf16" : "fp16";
                        change = half + " autocast (--precision " + half + ")";
                        changed = r.toBuilder().precision(half).build();
                    } else if (r.recomputedShare() > 0) {
                        change = "no gradient checkpointing (--no-grad-checkpointing; it costs memory)";
                        changed = r.toBuilder().checkpointing(false).build();
                    }
                }
                case "text_encoder", "vae_encoder" -> {
                    change = "precomputed features (--features precomputed)";
                    changed = r.toBuilder().features("precomputed").build();
                }
                case "allreduce" -> {
                    if (r.zero == 0 && r.weights.equals("fp32") && r.half()) {
                        change = "half-precision gradients (--weights mixed)";
                        changed = r.toBuilder().weights("mixed").build();
                    }
                }
                default -> {
                }
            }
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%s: %.2f s of %.2f s", label(k, r),
                    term.getValue(), c.stepSeconds()));
            if (changed != null) {
                Costs after = Costs.of(changed, changed.batch);
                double saves = c.stepSeconds() - after.stepSeconds();
                // A saving that would not fit the GPU (while the run does) is no advice.
                boolean fitsAfter = after.peakBytes() <= r.gpu.memoryBytes() || c.peakBytes() > r.gpu.memoryBytes();
                if (saves > 0.01 * c.stepSeconds() && fitsAfter) {
                    line.append(String.format(Locale.ROOT, "; %s would save %.2f s", change, saves));
                }
            }
            out.add(line.toString());
        }
        return List.copyOf(out);
    }

    private static String label(String term, ResolvedRun r) {
        return switch (term) {
            case "gemm" -> "GEMMs (" + (r.precision.equals("fp32") ? "fp32, no tensor cores" : r.precision) + ")";
            case "attention" -> (r.half() && r.attentionFp32 ? "fp32 attention" : r.attention + " attention")
                    + (r.recomputedShare() > 0 ? " with its recomputation" : "");
            case "elementwise" -> "element-wise kernels (norms, modulation, activations" + (r.compiled() ? ", compiled" : ", eager") + ")";
            case "text_encoder" -> "online " + (r.textEncoder == null ? "text" : shortName(r.textEncoder)) + " encoding";
            case "vae_encoder" -> "online VAE encoding";
            case "optimizer" -> optimizerLabel(r.optimizer) + " step";
            case "ema" -> "EMA update";
            case "allreduce" -> "gradient all-reduce not hidden by the backward pass";
            case "dequantize" -> r.baseWeights + " base weights dequantised as each layer runs";
            case "block_swap" -> r.blocksToSwap + " swapped blocks copied over PCIe beyond what compute hides";
            default -> term;
        };
    }

    /** What block swap moves over PCIe each step, and whether the compute hides it. */
    private static void blockSwapNote(ResolvedRun r, Costs c, List<String> notes) {
        double bytes = TrainerLevers.swapBytesPerStep(r);
        if (bytes <= 0 || r.gpu.pcieGbps() <= 0) {
            return;
        }
        double copy = bytes / (r.gpu.pcieGbps() * 1e9 * TrainerLevers.PINNED_COPY_EFFICIENCY);
        double exposed = c.time().getOrDefault("block_swap", 0.0);
        notes.add(String.format(Locale.ROOT, "%d swapped blocks cross PCIe twice a step: %.1f GB, %.2f s of copies at"
                + " %.0f GB/s pinned, %s", r.blocksToSwap, bytes / 1e9, copy,
                r.gpu.pcieGbps() * TrainerLevers.PINNED_COPY_EFFICIENCY, exposed > 0
                        ? String.format(Locale.ROOT, "%.2f s of them beyond the compute they overlap (PCIe-bound)", exposed)
                        : "hidden under the blocks' compute"));
    }

    static String optimizerLabel(String optimizer) {
        return switch (optimizer) {
            case "adamw" -> "AdamW";
            case "adamw8bit" -> "8-bit AdamW";
            case "came" -> "CAME";
            case "came8bit" -> "8-bit CAME";
            case "adafactor" -> "Adafactor";
            case "prodigy" -> "Prodigy";
            case "lion" -> "Lion";
            case "lion8bit" -> "8-bit Lion";
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
}
