package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Units.gb;
import static dev.trainwatch.estimator.Units.millions;
import static dev.trainwatch.estimator.Units.percent;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/** What to tell the user beside the numbers: the notes and the step's largest terms. Stateless. */
final class Advice {

    private Advice() {
    }

    static List<String> notes(ResolvedRun r, Costs c) {
        List<String> notes = new ArrayList<>();
        ModelProfile p = r.profile();
        long capacity = r.gpu().memoryBytes();
        if (c.peakBytes() > capacity) {
            notes.add("needs " + gb(c.peakBytes()) + " but " + r.gpu().id() + " has " + gb(capacity) + ": expect an out-of-memory error");
        } else if (c.peakBytes() > 0.9 * capacity) {
            notes.add("uses " + percent(c.peakBytes(), capacity) + " of " + r.gpu().id()
                    + "'s memory: at the limit, fragmentation or a larger aspect-ratio bucket can run out of memory");
        }
        blockSwapNote(r, c, notes);
        if ((r.optimizer().equals("came") || r.optimizer().equals("came8bit") || r.optimizer().equals("adafactor"))
                && p.pointwiseConvParams > 0) {
            notes.add(optimizerLabel(r.optimizer()) + " factors the last two dims of each weight, so the "
                    + millions(p.pointwiseConvParams) + " parameters (" + percent(p.pointwiseConvParams, p.params)
                    + ") in 4-D [O, I, 1, 1] conv weights keep full-size factors: optimizer state "
                    + gb(r.trainable().optimizerBytes(r.optimizer())) + " against " + gb(r.trainable().optimizerBytes("adamw")) + " for AdamW");
        }
        onlineEncoderNotes(r, c, notes);
        if (r.precision().equals("fp32") && r.gpu().tf32Tflops() != null) {
            notes.add(String.format(Locale.ROOT, "pure fp32 runs at %.1f TFLOPS on %s; TF32 matmuls would use %.0f",
                    r.gpu().fp32Tflops(), r.gpu().id(), r.gpu().tf32Tflops()));
        }
        if (r.attention().equals("math")) {
            long scores = r.sizes().plan().stream().mapToLong(l -> Math.round(l.attentionScoresPerSample()))
                    .max().orElse(0);
            if (scores > 0) {
                notes.add("attention materialises its score matrix (" + millions(scores * r.batch())
                        + " elements per block at this batch); fused flash/SDPA attention avoids it");
            }
        }
        if (r.partialCheckpointing()) {
            List<String> parts = IntStream.range(0, r.sizes().plan().size())
                    .mapToObj(i -> r.checkpointed(i) + " of " + r.sizes().plan().get(i).blocks()).toList();
            notes.add("gradient checkpointing recomputes " + String.join(" and ", parts) + " blocks"
                    + (r.sizes().plan().size() > 1 ? " (" + Architecture.groupNames(p.info) + ")" : "")
                    + String.format(Locale.ROOT, ": %.0f%% of the forward pass runs twice", 100 * r.recomputedShare()));
        }
        if (r.weights().equals("mixed")) {
            notes.add("half-precision parameters and gradients with an fp32 master copy in the optimizer"
                    + (r.zero() >= 1 && r.gpus() > 1 ? ", master and optimizer state sharded over " + r.gpus() + " GPUs (ZeRO " + r.zero() + ")" : ""));
        } else if (r.weights().equals("pure")) {
            notes.add("pure " + r.precision() + ": parameters, gradients and optimizer state in " + r.precision()
                    + " with no fp32 master copy (small updates can round away)");
        }
        if (r.eagerShare() < 1) {
            boolean mixed = r.weights().equals("mixed");
            notes.add(String.format(Locale.ROOT, "eager PyTorch%s on %s (%s) is priced at %.0f%% of its datasheet rates,"
                    + " as %s; --kernels compiled prices the full rates, and --from-run anchors on a run you observed",
                    mixed ? " with half parameters and fp32 master weights" : "", r.gpu().id(), r.gpu().architecture(),
                    100 * r.eagerShare(), mixed ? "the published eager runs of that regime on Hopper measured (Open-Sora"
                            + " and OpenDiT on ColossalAI's booster)" : "the one published A100/H100 pair of an eager"
                            + " autocast stack measured (the H100 1.56x the A100)"));
        }
        if (r.zero() > 0 && r.gpus() == 1) {
            notes.add("ZeRO shards over data-parallel ranks; with one GPU it saves nothing");
        }
        if (r.factors().stepTimeFactor() != 1.0 || r.factors().memoryFactor() != 1.0) {
            notes.add(String.format(Locale.ROOT, "calibrated from observed runs on %s/%s: step time x%.2f, memory x%.2f",
                    r.gpu().id(), p.info.family(), r.factors().stepTimeFactor(), r.factors().memoryFactor()));
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
        long working = MemoryModel.encoderTransientBytes(r, r.batch());
        notes.add("the encoders' working memory (" + gb(working) + " for this batch) is freed before the forward pass "
                + "and reused for activations; " + (c.memory().getOrDefault("encoder_transients", 0L) > 0
                        ? "it exceeds them, so " + gb(c.memory().get("encoder_transients")) + " of it adds to the peak"
                        : "it fits inside them and adds nothing to the peak"));
    }

    /** The step's largest terms (at least 5%, at most four), each with the change that would save most of it, re-priced. */
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
                    if (r.half() && r.attentionFp32()) {
                        change = "half-precision attention (fp32_attention=False; --attention-precision half)";
                        changed = r.with(b -> b.attentionFp32 = false);
                    } else if (r.attention().equals("math")) {
                        change = "fused attention (--attention flash)";
                        changed = r.with(b -> b.attention = "flash");
                    } else if (r.attention().equals("mem-efficient")) {
                        change = "FlashAttention-2 / SDPA flash (--attention flash)";
                        changed = r.with(b -> b.attention = "flash");
                    }
                }
                case "elementwise" -> {
                    if (!r.compiled()) {
                        change = "torch.compile (--kernels compiled)";
                        changed = r.with(b -> b.kernels = "compiled");
                    }
                }
                case "gemm" -> {
                    if (!r.half()) {
                        String half = r.gpu().bf16Tflops() != null ? "bf16" : "fp16";
                        change = half + " autocast (--precision " + half + ")";
                        changed = r.with(b -> b.precision = half);
                    } else if (r.recomputedShare() > 0) {
                        change = "no gradient checkpointing (--no-grad-checkpointing; it costs memory)";
                        changed = r.with(b -> b.checkpointing(false));
                    }
                }
                case "text_encoder", "vae_encoder" -> {
                    change = "precomputed features (--features precomputed)";
                    changed = r.with(b -> b.features = "precomputed");
                }
                case "allreduce" -> {
                    if (r.zero() == 0 && r.weights().equals("fp32") && r.half()) {
                        change = "half-precision gradients (--weights mixed)";
                        changed = r.with(b -> b.weights = "mixed");
                    }
                }
                default -> {
                }
            }
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%s: %.2f s of %.2f s", label(k, r),
                    term.getValue(), c.stepSeconds()));
            if (changed != null) {
                Costs after = Costs.of(changed, changed.batch());
                double saves = c.stepSeconds() - after.stepSeconds();
                // A saving that would not fit the GPU (while the run does) is no advice.
                boolean fitsAfter = after.peakBytes() <= r.gpu().memoryBytes() || c.peakBytes() > r.gpu().memoryBytes();
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
            case "gemm" -> "GEMMs (" + (r.precision().equals("fp32") ? "fp32, no tensor cores" : r.precision()) + ")";
            case "attention" -> (r.half() && r.attentionFp32() ? "fp32 attention" : r.attention() + " attention")
                    + (r.recomputedShare() > 0 ? " with its recomputation" : "");
            case "elementwise" -> "element-wise kernels (norms, modulation, activations" + (r.compiled() ? ", compiled" : ", eager") + ")";
            case "text_encoder" -> "online " + (r.textEncoder() == null ? "text" : Levers.shortName(r.textEncoder())) + " encoding";
            case "vae_encoder" -> "online VAE encoding";
            case "optimizer" -> optimizerLabel(r.optimizer()) + " step";
            case "ema" -> "EMA update";
            case "allreduce" -> "gradient all-reduce not hidden by the backward pass";
            case "dequantize" -> r.baseWeights() + " base weights dequantised as each layer runs";
            case "block_swap" -> r.blocksToSwap() + " swapped blocks copied over PCIe beyond what compute hides";
            default -> term;
        };
    }

    /** What block swap moves over PCIe each step, and whether the compute hides it. */
    private static void blockSwapNote(ResolvedRun r, Costs c, List<String> notes) {
        double copy = TrainerLevers.swapCopySeconds(r);
        if (copy <= 0) {
            return;
        }
        double exposed = c.time().getOrDefault("block_swap", 0.0);
        notes.add(String.format(Locale.ROOT, "%d swapped blocks cross PCIe twice a step: %.1f GB, %.2f s of copies at"
                + " %.0f GB/s pinned, %s", r.blocksToSwap(), TrainerLevers.swapBytesPerStep(r) / 1e9, copy,
                r.gpu().pcieGbps() * TrainerLevers.PINNED_COPY_EFFICIENCY, exposed > 0
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
}
