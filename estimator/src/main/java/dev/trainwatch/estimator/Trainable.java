package dev.trainwatch.estimator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which parameters of a model a run trains: all of them (pre-training, full fine-tune), some module kinds with the
 * rest frozen (a frozen-backbone fine-tune), or rank-r LoRA adapters on some module kinds with every base weight
 * frozen (diffusers/PEFT, kohya, Sana's scripts). Immutable.
 *
 * @param loraRank        0 without LoRA
 * @param targets         module kinds adapted (LoRA) or trained (frozen backbone); empty: all (no LoRA)
 * @param trainableParams parameters that receive gradients (adapters with LoRA)
 * @param adapterParams   LoRA adapter parameters (A and B matrices), 0 without LoRA
 * @param frozenParams    parameters of the model that receive no gradient
 * @param optimizerBytes  optimizer state of the trainable parameters, per optimizer in {@link OptimizerState#OPTIMIZERS}
 */
record Trainable(int loraRank, List<String> targets, long trainableParams, long adapterParams, long frozenParams,
        long[] optimizerBytes) {

    /** Module kinds a target list may name. */
    static final List<String> KINDS = List.of("attention", "cross_attention", "mlp", "modulation", "embedding", "final");

    /** Everything trains: the pre-training and full fine-tune case. */
    static Trainable all(ModelProfile p) {
        long[] bytes = OptimizerState.OPTIMIZERS.stream().mapToLong(o -> p.tensors.stream().filter(Tensor::trainable)
                .mapToLong(t -> OptimizerState.bytes(o, t.shape()) * t.count()).sum()).toArray();
        return new Trainable(0, List.of(), p.trainableParams, 0, p.params - p.trainableParams, bytes);
    }

    /**
     * @param rank    LoRA rank, or null/0 for a frozen-backbone fine-tune of {@code targets}
     * @param targets module kinds; null: attention with LoRA, everything without
     * @throws InvalidSpecException on an unknown kind or a rank out of range
     */
    static Trainable of(ModelProfile p, Integer rank, List<String> targets) {
        int r = rank == null ? 0 : rank;
        if (r < 0 || r > 4096) {
            throw new InvalidSpecException("lora_rank must be between 1 and 4096, got " + rank);
        }
        List<String> kinds = new ArrayList<>();
        if (targets != null) {
            for (String t : targets) {
                String typed = t == null ? "" : t.strip().toLowerCase(Locale.ROOT).replace('-', '_');
                String k = switch (typed) {
                    case "attn", "self_attention" -> "attention";
                    case "cross_attn" -> "cross_attention";
                    case "ffn", "ff" -> "mlp";
                    case "adaln" -> "modulation";
                    default -> typed;
                };
                if (k.equals("all") || k.equals("*")) {
                    kinds = new ArrayList<>(KINDS);
                    break;
                }
                if (!KINDS.contains(k)) {
                    throw new InvalidSpecException("unknown module kind '" + t + "' for lora_targets; choose from "
                            + String.join(", ", KINDS) + " or all");
                }
                if (!kinds.contains(k)) {
                    kinds.add(k);
                }
            }
        }
        if (r == 0 && (targets == null || kinds.size() == KINDS.size())) {
            return all(p);
        }
        if (kinds.isEmpty()) {
            kinds.add("attention");
        }
        long trainable = 0;
        long adapters = 0;
        long[] bytes = new long[OptimizerState.OPTIMIZERS.size()];
        for (Tensor t : p.tensors) {
            if (!t.trainable() || !targeted(t, kinds)) {
                continue;
            }
            if (r > 0) {
                long[] s = t.shape();
                if (!isMatrix(t)) {
                    continue; // LoRA adapts matrices (Linear and 1x1 conv weights), not biases or tables
                }
                long in = t.numel() / s[0];
                long[] a = {r, in};
                long[] b = {s[0], r};
                long n = (long) r * (in + s[0]) * t.count();
                adapters += n;
                for (int i = 0; i < bytes.length; i++) {
                    String o = OptimizerState.OPTIMIZERS.get(i);
                    bytes[i] += (OptimizerState.bytes(o, a) + OptimizerState.bytes(o, b)) * t.count();
                }
            } else {
                trainable += t.totalNumel();
                for (int i = 0; i < bytes.length; i++) {
                    bytes[i] += OptimizerState.bytes(OptimizerState.OPTIMIZERS.get(i), t.shape()) * t.count();
                }
            }
        }
        if (r > 0) {
            if (adapters == 0) {
                throw new InvalidSpecException(p.info.id() + " has no " + String.join("/", kinds)
                        + " weights to adapt; choose from " + String.join(", ", KINDS));
            }
            return new Trainable(r, List.copyOf(kinds), adapters, adapters, p.params, bytes);
        }
        if (trainable == 0) {
            throw new InvalidSpecException(p.info.id() + " has no trainable " + String.join("/", kinds) + " parameters");
        }
        return new Trainable(0, List.copyOf(kinds), trainable, 0, p.params - trainable, bytes);
    }

    boolean full() {
        return loraRank == 0 && targets.isEmpty();
    }

    boolean lora() {
        return loraRank > 0;
    }

    long optimizerBytes(String optimizer) {
        return optimizerBytes[OptimizerState.OPTIMIZERS.indexOf(optimizer)];
    }

    /** Whether the weight of {@code t} receives a gradient in this run (its weight-gradient GEMM runs). */
    boolean trainsWeight(Tensor t) {
        return t.trainable() && (full() || (!lora() && targeted(t, targets)));
    }

    /** Whether {@code t} carries a LoRA adapter in this run. */
    boolean adapted(Tensor t) {
        return lora() && t.trainable() && isMatrix(t) && targeted(t, targets);
    }

    static boolean isMatrix(Tensor t) {
        long[] s = t.shape();
        return s.length == 2 || (s.length == 4 && s[2] == 1 && s[3] == 1);
    }

    private static boolean targeted(Tensor t, List<String> kinds) {
        return kindsOf(t.name()).stream().anyMatch(kinds::contains);
    }

    /** Module kinds of a parameter, from its PyTorch name. MMDiT's fused single-stream linears are both. */
    static List<String> kindsOf(String name) {
        if (name.startsWith("single_blocks.linear1") || name.startsWith("single_blocks.linear2")) {
            return List.of("attention", "mlp");
        }
        if (name.contains("cross_attn")) {
            return List.of("cross_attention");
        }
        if (name.contains("attn") || name.startsWith("single_blocks.norm")) {
            return List.of("attention");
        }
        if (name.contains("mlp") && !name.startsWith("t_embedder") && !name.startsWith("time_in")
                && !name.contains("_embedder")) {
            return List.of("mlp");
        }
        if (name.contains("adaLN") || name.contains("_mod.") || name.contains("modulation") || name.startsWith("t_block")
                || name.contains("scale_shift_table")) {
            return List.of("modulation");
        }
        if (name.startsWith("final_layer")) {
            return List.of("final");
        }
        return List.of("embedding");
    }
}
