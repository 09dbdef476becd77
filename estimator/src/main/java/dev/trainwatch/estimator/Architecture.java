package dev.trainwatch.estimator;

import dev.trainwatch.estimator.Tensor.Role;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.ArrayList;
import java.util.List;

/**
 * Derives a model's parameter tensors and its per-block costs from the architecture fields of the catalog, the
 * way the reference PyTorch modules build them. Stateless.
 */
final class Architecture {

    private Architecture() {
    }

    /** Every parameter tensor of the trained network (buffers that {@code parameters()} does not return excluded). */
    static List<Tensor> tensors(ModelInfo m) {
        List<Tensor> t = new ArrayList<>();
        switch (m.architecture()) {
            case "dit" -> dit(t, m);
            case "pixart" -> pixart(t, m);
            case "sana" -> sana(t, m);
            case "stdit", "stdit3" -> stdit(t, m);
            case "mmdit" -> mmdit(t, m);
            case "sd3" -> DiffusersArchitectures.sd3(t, m);
            case "wan" -> DiffusersArchitectures.wan(t, m);
            case "cogvideox" -> DiffusersArchitectures.cogVideoX(t, m);
            case "ltx" -> DiffusersArchitectures.ltx(t, m);
            case "zimage" -> DiffusersArchitectures.zImage(t, m);
            default -> throw new IllegalStateException("catalog: unknown architecture " + m.architecture());
        }
        return List.copyOf(t);
    }

    private static long outChannels(ModelInfo m) {
        return m.learnSigma() ? 2L * m.latentChannels() : m.latentChannels();
    }

    private static void dit(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        int p = m.patch();
        long c = m.latentChannels();
        long out = outChannels(m);
        linearConv(t, "x_embedder.proj", h, new long[] {c, p, p});
        long posSide = m.posEmbedResolution() / (long) m.pixelsPerToken();
        t.add(new Tensor("pos_embed", new long[] {1, posSide * posSide, h}, 1, false, Role.NONE));
        timestepEmbedder(t, "t_embedder", h);
        t.add(new Tensor("y_embedder.embedding_table", new long[] {m.numClasses() + 1L, h}, 1, true, Role.NONE));
        int L = m.depth();
        selfAttention(t, "blocks.attn", h, L, true);
        mlp(t, "blocks.mlp", h, mlpHidden(m), L, Role.IMAGE_TOKEN);
        linear(t, "blocks.adaLN_modulation.1", 6 * h, h, L, Role.SAMPLE, true);
        linear(t, "final_layer.linear", (long) p * p * out, h, 1, Role.IMAGE_TOKEN, true);
        linear(t, "final_layer.adaLN_modulation.1", 2 * h, h, 1, Role.SAMPLE, true);
    }

    private static void pixart(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        int p = m.patch();
        long c = m.latentChannels();
        long out = outChannels(m);
        t2iInputs(t, m, new long[] {c, p, p});
        if (m.sizeEmbedders()) {
            timestepEmbedder(t, "csize_embedder", h / 3);
            timestepEmbedder(t, "ar_embedder", h / 3);
        }
        int L = m.depth();
        selfAttention(t, "blocks.attn", h, L, true);
        crossAttention(t, "blocks.cross_attn", h, L);
        mlp(t, "blocks.mlp", h, mlpHidden(m), L, Role.IMAGE_TOKEN);
        t.add(new Tensor("blocks.scale_shift_table", new long[] {6, h}, L, true, Role.NONE));
        t2iFinal(t, h, (long) p * p * out);
    }

    private static void sana(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        int p = m.patch();
        long c = m.latentChannels();
        long out = outChannels(m);
        t2iInputs(t, m, new long[] {c, p, p});
        t.add(new Tensor("attention_y_norm.weight", new long[] {h}, 1, true, Role.NONE));
        int L = m.depth();
        long f = m.ffnHidden();
        // LiteLA: qkv without bias, proj with bias.
        selfAttention(t, "blocks.attn", h, L, false);
        crossAttention(t, "blocks.cross_attn", h, L);
        // Mix-FFN (GLUMBConv): 1x1 conv h->2F, 3x3 depthwise on 2F, GLU, 1x1 conv F->h (no bias).
        // These are 4-D [O, I, 1, 1] weights: optimizers that factor "the last two dims" see O*I elements.
        t.add(new Tensor("blocks.mlp.inverted_conv.conv.weight", new long[] {2 * f, h, 1, 1}, L, true, Role.IMAGE_TOKEN));
        t.add(new Tensor("blocks.mlp.inverted_conv.conv.bias", new long[] {2 * f}, L, true, Role.NONE));
        t.add(new Tensor("blocks.mlp.depth_conv.conv.weight", new long[] {2 * f, 1, 3, 3}, L, true, Role.IMAGE_TOKEN));
        t.add(new Tensor("blocks.mlp.depth_conv.conv.bias", new long[] {2 * f}, L, true, Role.NONE));
        t.add(new Tensor("blocks.mlp.point_conv.conv.weight", new long[] {h, f, 1, 1}, L, true, Role.IMAGE_TOKEN));
        t.add(new Tensor("blocks.scale_shift_table", new long[] {6, h}, L, true, Role.NONE));
        t2iFinal(t, h, (long) p * p * out);
    }

    private static void stdit(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        int p = m.patch();
        long c = m.latentChannels();
        long out = outChannels(m);
        t2iInputs(t, m, new long[] {c, Math.max(1, m.patchT()), p, p});
        int L = m.depth();
        if (m.architecture().equals("stdit")) {
            selfAttention(t, "blocks.attn", h, L, true);
            selfAttention(t, "blocks.attn_temp", h, L, true);
            crossAttention(t, "blocks.cross_attn", h, L);
            mlp(t, "blocks.mlp", h, mlpHidden(m), L, Role.IMAGE_TOKEN);
            t.add(new Tensor("blocks.scale_shift_table", new long[] {6, h}, L, true, Role.NONE));
        } else {
            timestepEmbedder(t, "fps_embedder", h);
            for (String group : List.of("spatial_blocks", "temporal_blocks")) {
                selfAttention(t, group + ".attn", h, L, true);
                long headDim = h / m.heads();
                t.add(new Tensor(group + ".attn.q_norm.weight", new long[] {headDim}, L, true, Role.NONE));
                t.add(new Tensor(group + ".attn.k_norm.weight", new long[] {headDim}, L, true, Role.NONE));
                crossAttention(t, group + ".cross_attn", h, L);
                mlp(t, group + ".mlp", h, mlpHidden(m), L, Role.IMAGE_TOKEN);
                t.add(new Tensor(group + ".scale_shift_table", new long[] {6, h}, L, true, Role.NONE));
            }
        }
        t2iFinal(t, h, (long) Math.max(1, m.patchT()) * p * p * out);
    }

    private static void mmdit(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        int p = m.patch();
        long c = m.latentChannels();
        long out = outChannels(m);
        long inFeatures = c * p * p;
        linear(t, "img_in", h, inFeatures, 1, Role.IMAGE_TOKEN, true);
        timestepEmbedder(t, "time_in", h);
        DiffusersArchitectures.mmditConditioning(t, m);
        long headDim = h / m.heads();
        int L = m.depth();
        long mlp = mlpHidden(m);
        for (String stream : List.of("img", "txt")) {
            Role role = stream.equals("img") ? Role.IMAGE_TOKEN : Role.TEXT_TOKEN;
            String b = "double_blocks." + stream;
            linear(t, b + "_mod.lin", 6 * h, h, L, Role.SAMPLE, true);
            linear(t, b + "_attn.qkv", 3 * h, h, L, role, true);
            t.add(new Tensor(b + "_attn.norm.query_norm.scale", new long[] {headDim}, L, true, Role.NONE));
            t.add(new Tensor(b + "_attn.norm.key_norm.scale", new long[] {headDim}, L, true, Role.NONE));
            linear(t, b + "_attn.proj", h, h, L, role, true);
            linear(t, b + "_mlp.0", mlp, h, L, role, true);
            linear(t, b + "_mlp.2", h, mlp, L, role, true);
        }
        int S = m.singleDepth();
        linear(t, "single_blocks.linear1", 3 * h + mlp, h, S, Role.JOINT_TOKEN, true);
        linear(t, "single_blocks.linear2", h, h + mlp, S, Role.JOINT_TOKEN, true);
        t.add(new Tensor("single_blocks.norm.query_norm.scale", new long[] {headDim}, S, true, Role.NONE));
        t.add(new Tensor("single_blocks.norm.key_norm.scale", new long[] {headDim}, S, true, Role.NONE));
        linear(t, "single_blocks.modulation.lin", 3 * h, h, S, Role.SAMPLE, true);
        linear(t, "final_layer.adaLN_modulation.1", 2 * h, h, 1, Role.SAMPLE, true);
        linear(t, "final_layer.linear", (long) p * p * out, h, 1, Role.IMAGE_TOKEN, true);
    }

    /**
     * The block groups of a model at a given input size.
     *
     * @param frames latent frames (1 for images)
     * @param spatialTokens image tokens per latent frame
     */
    static List<LayerPlan> plan(ModelInfo m, long frames, long spatialTokens) {
        long h = m.hidden();
        long tokens = frames * spatialTokens;
        long text = m.textTokens();
        long joint = tokens + text;
        double heads = m.heads();
        double cross = 2.0 * tokens * text * h;
        double crossScores = heads * tokens * text;
        double textKv = 2.0 * text * h;
        return switch (m.architecture()) {
            case "dit" -> List.of(new LayerPlan(m.depth(), tokens, 48, 80,
                    heads * tokens * tokens, 2.0 * tokens * tokens * h, 0));
            case "pixart", "wan", "ltx" -> List.of(new LayerPlan(m.depth(), tokens, 58, 96,
                    heads * tokens * tokens + crossScores, 2.0 * tokens * tokens * h + cross, textKv));
            // Linear attention: K^T V and Q (K^T V) per head cost 2 * T * h * headDim; no score matrix.
            // Mix-FFN keeps its 2F = 5h wide conv outputs and GLU halves, hence the larger coefficient.
            case "sana" -> List.of(new LayerPlan(m.depth(), tokens, 76, 128,
                    crossScores, 2.0 * tokens * h * m.headDim() + cross, textKv));
            case "stdit" -> List.of(new LayerPlan(m.depth(), tokens, 64, 106,
                    heads * (spatialTokens * spatialTokens * frames + frames * frames * spatialTokens) + crossScores,
                    2.0 * h * (spatialTokens * spatialTokens * frames + frames * frames * spatialTokens) + cross, textKv));
            case "stdit3" -> List.of(
                    new LayerPlan(m.depth(), tokens, 58, 96, heads * spatialTokens * spatialTokens * frames + crossScores,
                            2.0 * h * spatialTokens * spatialTokens * frames + cross, textKv),
                    new LayerPlan(m.depth(), tokens, 58, 96, heads * frames * frames * spatialTokens + crossScores,
                            2.0 * h * frames * frames * spatialTokens + cross, textKv));
            // Joint attention; Z-Image's refiners (image tokens alone, text tokens alone) are priced as joint blocks:
            // a slight excess.
            case "sd3", "cogvideox", "zimage" -> List.of(new LayerPlan(groupDepths(m)[0], joint, 48, 80,
                    heads * joint * joint, 2.0 * joint * joint * h, 0));
            case "mmdit" -> List.of(
                    new LayerPlan(m.depth(), joint, 48, 80, heads * joint * joint, 2.0 * joint * joint * h, 0),
                    new LayerPlan(m.singleDepth(), joint, 44, 72, heads * joint * joint, 2.0 * joint * joint * h, 0));
            default -> throw new IllegalStateException("catalog: unknown architecture " + m.architecture());
        };
    }

    /** Blocks per group of {@link #plan}, in forward order. */
    static int[] groupDepths(ModelInfo m) {
        return switch (m.architecture()) {
            case "stdit3" -> new int[] {m.depth(), m.depth()};
            case "mmdit" -> new int[] {m.depth(), m.singleDepth()};
            case "zimage" -> new int[] {m.depth() + 2 * m.refinerDepth()};
            default -> new int[] {m.depth()};
        };
    }

    /** What the groups of {@link #plan} are, for notes. */
    static String groupNames(ModelInfo m) {
        return switch (m.architecture()) {
            case "stdit3" -> "spatial, temporal";
            case "mmdit" -> "double-stream, single-stream";
            default -> "blocks";
        };
    }

    static long mlpHidden(ModelInfo m) {
        return Math.round(m.hidden() * m.mlpRatio());
    }

    static void linear(List<Tensor> t, String name, long out, long in, int count, Role role, boolean bias) {
        t.add(new Tensor(name + ".weight", new long[] {out, in}, count, true, role));
        if (bias) {
            t.add(new Tensor(name + ".bias", new long[] {out}, count, true, Role.NONE));
        }
    }

    /** A patch-embedding convolution: weight [h, C, (pt,) p, p] applied once per token. */
    static void linearConv(List<Tensor> t, String name, long out, long[] inShape) {
        long[] shape = new long[inShape.length + 1];
        shape[0] = out;
        System.arraycopy(inShape, 0, shape, 1, inShape.length);
        t.add(new Tensor(name + ".weight", shape, 1, true, Role.IMAGE_TOKEN));
        t.add(new Tensor(name + ".bias", new long[] {out}, 1, true, Role.NONE));
    }

    /** Sinusoidal frequency embedding (256) -> Linear -> SiLU -> Linear, once per sample. */
    static void timestepEmbedder(List<Tensor> t, String name, long h) {
        projection(t, name + ".mlp.0", name + ".mlp.2", h, 256, Role.SAMPLE);
    }

    /** Two linears, {@code in -> out} then {@code out -> out}, as embedders and caption projections stack them. */
    static void projection(List<Tensor> t, String first, String second, long out, long in, Role role) {
        linear(t, first, out, in, 1, role, true);
        linear(t, second, out, out, 1, role, true);
    }

    /** PixArt-style inputs: patch embedding, timestep embedder, adaLN-single's {@code t_block}, caption projection. */
    private static void t2iInputs(List<Tensor> t, ModelInfo m, long[] patchShape) {
        long h = m.hidden();
        linearConv(t, "x_embedder.proj", h, patchShape);
        timestepEmbedder(t, "t_embedder", h);
        linear(t, "t_block.1", 6 * h, h, 1, Role.SAMPLE, true);
        projection(t, "y_embedder.y_proj.fc1", "y_embedder.y_proj.fc2", h, m.captionChannels(), Role.TEXT_TOKEN);
    }

    private static void selfAttention(List<Tensor> t, String name, long h, int count, boolean bias) {
        linear(t, name + ".qkv", 3 * h, h, count, Role.IMAGE_TOKEN, bias);
        linear(t, name + ".proj", h, h, count, Role.IMAGE_TOKEN, true);
    }

    /** Queries and output per image token; keys and values per caption token. */
    private static void crossAttention(List<Tensor> t, String name, long h, int count) {
        linear(t, name + ".q_linear", h, h, count, Role.IMAGE_TOKEN, true);
        linear(t, name + ".kv_linear", 2 * h, h, count, Role.TEXT_TOKEN, true);
        linear(t, name + ".proj", h, h, count, Role.IMAGE_TOKEN, true);
    }

    static void mlp(List<Tensor> t, String name, long h, long hidden, int count, Role role) {
        linear(t, name + ".fc1", hidden, h, count, role, true);
        linear(t, name + ".fc2", h, hidden, count, role, true);
    }

    private static void t2iFinal(List<Tensor> t, long h, long outFeatures) {
        linear(t, "final_layer.linear", outFeatures, h, 1, Role.IMAGE_TOKEN, true);
        t.add(new Tensor("final_layer.scale_shift_table", new long[] {2, h}, 1, true, Role.NONE));
    }
}
