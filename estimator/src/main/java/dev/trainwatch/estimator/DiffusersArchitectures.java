package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Architecture.linear;
import static dev.trainwatch.estimator.Architecture.linearConv;
import static dev.trainwatch.estimator.Architecture.mlp;
import static dev.trainwatch.estimator.Architecture.mlpHidden;
import static dev.trainwatch.estimator.Architecture.projection;
import static dev.trainwatch.estimator.Architecture.timestepEmbedder;

import dev.trainwatch.estimator.Tensor.Role;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.List;

/**
 * The tensors of the diffusers transformers LoRA trainers fine-tune: SD3/SD3.5, Wan, CogVideoX,
 * LTX-Video and Z-Image (counts checked in ParameterCountTest), and the conditioning inputs of the {@code mmdit}
 * models of {@link Architecture}. Stateless.
 */
final class DiffusersArchitectures {

    /** The pooled-text width Stable Diffusion 3 projects (CLIP-L 768 + CLIP-G 1280). */
    private static final long SD3_POOLED = 2048;

    private DiffusersArchitectures() {
    }

    /** What an {@code mmdit} adds beside its timestep embedder: guidance and pooled-text embedders, the text input. */
    static void mmditConditioning(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        if (m.guidanceEmbed()) {
            timestepEmbedder(t, "guidance_in", h);
        }
        if (m.vectorChannels() > 0) {
            projection(t, "vector_in.in_layer", "vector_in.out_layer", h, m.vectorChannels(), Role.SAMPLE);
        }
        if (m.captionNorm()) {
            t.add(new Tensor("txt_norm.weight", new long[] {m.captionChannels()}, 1, true, Role.NONE));
        }
        if (m.refinerDepth() > 0) {
            tokenRefiner(t, m);
        } else {
            linear(t, "txt_in", h, m.captionChannels(), 1, Role.TEXT_TOKEN, true);
        }
    }

    /** HunyuanVideo's text-token refiner: its own timestep and mean-caption embedders, then self-attention blocks. */
    private static void tokenRefiner(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        long c = m.captionChannels();
        int n = m.refinerDepth();
        timestepEmbedder(t, "txt_in.t_embedder", h);
        projection(t, "txt_in.c_embedder.linear_1", "txt_in.c_embedder.linear_2", h, c, Role.SAMPLE);
        linear(t, "txt_in.input_embedder", h, c, 1, Role.TEXT_TOKEN, true);
        layerNorm(t, "txt_in.refiner_blocks.norm1", h, n);
        linear(t, "txt_in.refiner_blocks.self_attn_qkv", 3 * h, h, n, Role.TEXT_TOKEN, true);
        linear(t, "txt_in.refiner_blocks.self_attn_proj", h, h, n, Role.TEXT_TOKEN, true);
        layerNorm(t, "txt_in.refiner_blocks.norm2", h, n);
        mlp(t, "txt_in.refiner_blocks.mlp", h, mlpHidden(m), n, Role.TEXT_TOKEN);
        linear(t, "txt_in.refiner_blocks.adaLN_modulation", 2 * h, h, n, Role.SAMPLE, true);
    }

    /** SD3/3.5 ({@code SD3Transformer2DModel}): joint blocks, RMS q/k norms, SD3.5-medium's second self-attention. */
    static void sd3(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        long c = m.latentChannels();
        int p = m.patch();
        int L = m.depth();
        long headDim = h / m.heads();
        linearConv(t, "pos_embed.proj", h, new long[] {c, p, p});
        long side = m.posEmbedResolution() / (long) m.pixelsPerToken();
        t.add(new Tensor("pos_embed.pos_embed", new long[] {1, side * side, h}, 1, true, Role.NONE));
        timestepEmbedder(t, "time_text_embed.timestep_embedder", h);
        projection(t, "time_text_embed.text_embedder.linear_1", "time_text_embed.text_embedder.linear_2", h, SD3_POOLED,
                Role.SAMPLE);
        linear(t, "context_embedder", h, m.captionChannels(), 1, Role.TEXT_TOKEN, true);
        int dual = Math.min(L, m.dualAttentionDepth());
        linear(t, "x_block.adaLN_modulation", 9 * h, h, dual, Role.SAMPLE, true);
        linear(t, "x_block.adaLN_modulation", 6 * h, h, L - dual, Role.SAMPLE, true);
        linear(t, "context_block.adaLN_modulation", 6 * h, h, L - 1, Role.SAMPLE, true);
        linear(t, "context_block.adaLN_modulation", 2 * h, h, 1, Role.SAMPLE, true);
        for (String stream : List.of("x_block", "context_block")) {
            Role role = stream.equals("x_block") ? Role.IMAGE_TOKEN : Role.TEXT_TOKEN;
            int mlpBlocks = stream.equals("x_block") ? L : L - 1;
            linear(t, stream + ".attn.qkv", 3 * h, h, L, role, true);
            rmsNorm(t, stream + ".attn.norm_q", headDim, L);
            rmsNorm(t, stream + ".attn.norm_k", headDim, L);
            linear(t, stream + ".attn.proj", h, h, mlpBlocks, role, true);
            mlp(t, stream + ".mlp", h, mlpHidden(m), mlpBlocks, role);
        }
        if (dual > 0) {
            linear(t, "x_block.attn2.qkv", 3 * h, h, dual, Role.IMAGE_TOKEN, true);
            rmsNorm(t, "x_block.attn2.norm_q", headDim, dual);
            rmsNorm(t, "x_block.attn2.norm_k", headDim, dual);
            linear(t, "x_block.attn2.proj", h, h, dual, Role.IMAGE_TOKEN, true);
        }
        linear(t, "final_layer.adaLN_modulation", 2 * h, h, 1, Role.SAMPLE, true);
        linear(t, "final_layer.linear", (long) p * p * c, h, 1, Role.IMAGE_TOKEN, true);
    }

    /** Wan 2.1/2.2 ({@code WanTransformer3DModel}): self- and cross-attention, RMS norms, shared time projection. */
    static void wan(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        long f = m.ffnHidden();
        int L = m.depth();
        long c = m.latentChannels();
        long patchIn = c * Math.max(1, m.patchT()) * m.patch() * m.patch();
        linear(t, "patch_embedding", h, patchIn, 1, Role.IMAGE_TOKEN, true);
        timestepEmbedder(t, "time_embedder", h);
        linear(t, "time_projection", 6 * h, h, 1, Role.SAMPLE, true);
        projection(t, "text_embedding.linear_1", "text_embedding.linear_2", h, m.captionChannels(), Role.TEXT_TOKEN);
        normedAttentions(t, h, L);
        layerNorm(t, "blocks.norm3", h, L);
        mlp(t, "blocks.mlp", h, f, L, Role.IMAGE_TOKEN);
        t.add(new Tensor("blocks.modulation", new long[] {1, 6, h}, L, true, Role.NONE));
        linear(t, "head.linear", patchIn, h, 1, Role.IMAGE_TOKEN, true);
        t.add(new Tensor("head.modulation", new long[] {1, 2, h}, 1, true, Role.NONE));
    }

    /** Self-attention and cross-attention to the caption, each with RMS q/k norms over the whole width (Wan, LTX). */
    private static void normedAttentions(List<Tensor> t, long h, int L) {
        attention(t, "blocks.attn", h, L, Role.IMAGE_TOKEN, Role.IMAGE_TOKEN, true);
        rmsNorm(t, "blocks.attn.norm_q", h, L);
        rmsNorm(t, "blocks.attn.norm_k", h, L);
        attention(t, "blocks.cross_attn", h, L, Role.IMAGE_TOKEN, Role.TEXT_TOKEN, true);
        rmsNorm(t, "blocks.cross_attn.norm_q", h, L);
        rmsNorm(t, "blocks.cross_attn.norm_k", h, L);
    }

    /** CogVideoX ({@code CogVideoXTransformer3DModel}): one sequence, expert adaptive LayerNorms per modality. */
    static void cogVideoX(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        long e = m.timeEmbedDim() > 0 ? m.timeEmbedDim() : h;
        int L = m.depth();
        int p = m.patch();
        long c = m.latentChannels();
        long headDim = h / m.heads();
        linearConv(t, "patch_embed.proj", h, new long[] {c, p, p});
        linear(t, "patch_embed.text_proj", h, m.captionChannels(), 1, Role.TEXT_TOKEN, true);
        projection(t, "time_embedding.linear_1", "time_embedding.linear_2", e, h, Role.SAMPLE);
        for (String norm : List.of("blocks.norm1", "blocks.norm2")) {
            linear(t, norm + ".adaLN_modulation", 6 * h, e, L, Role.SAMPLE, true);
            layerNorm(t, norm + ".norm", h, L);
        }
        attention(t, "blocks.attn", h, L, Role.JOINT_TOKEN, Role.JOINT_TOKEN, true);
        layerNorm(t, "blocks.attn.norm_q", headDim, L);
        layerNorm(t, "blocks.attn.norm_k", headDim, L);
        mlp(t, "blocks.mlp", h, mlpHidden(m), L, Role.JOINT_TOKEN);
        layerNorm(t, "norm_final", h, 1);
        linear(t, "final_layer.adaLN_modulation", 2 * h, e, 1, Role.SAMPLE, true);
        layerNorm(t, "final_layer.norm", h, 1);
        linear(t, "final_layer.linear", (long) p * p * c, h, 1, Role.IMAGE_TOKEN, true);
    }

    /** LTX-Video ({@code LTXVideoTransformer3DModel}): adaLN-single, 128-channel latent, patch 1, RMS q/k norms. */
    static void ltx(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        int L = m.depth();
        long c = m.latentChannels();
        linear(t, "proj_in", h, c, 1, Role.IMAGE_TOKEN, true);
        t.add(new Tensor("scale_shift_table", new long[] {2, h}, 1, true, Role.NONE));
        timestepEmbedder(t, "t_embedder", h);
        linear(t, "t_block", 6 * h, h, 1, Role.SAMPLE, true);
        projection(t, "caption_projection.linear_1", "caption_projection.linear_2", h, m.captionChannels(),
                Role.TEXT_TOKEN);
        normedAttentions(t, h, L);
        mlp(t, "blocks.mlp", h, mlpHidden(m), L, Role.IMAGE_TOKEN);
        t.add(new Tensor("blocks.scale_shift_table", new long[] {6, h}, L, true, Role.NONE));
        linear(t, "final_layer.linear", c, h, 1, Role.IMAGE_TOKEN, true);
    }

    /** Z-Image (S3-DiT): one stream, SwiGLU FFN, tanh-gated modulation, noise and context refiner blocks. */
    static void zImage(List<Tensor> t, ModelInfo m) {
        long h = m.hidden();
        long f = m.ffnHidden();
        long e = m.timeEmbedDim() > 0 ? m.timeEmbedDim() : h;
        int p = m.patch();
        long c = m.latentChannels();
        int r = m.refinerDepth();
        long headDim = h / m.heads();
        linear(t, "x_embedder", h, c * p * p, 1, Role.IMAGE_TOKEN, true);
        linear(t, "t_embedder.mlp.0", 1024, 256, 1, Role.SAMPLE, true);
        linear(t, "t_embedder.mlp.2", e, 1024, 1, Role.SAMPLE, true);
        rmsNorm(t, "cap_embedder.norm", m.captionChannels(), 1);
        linear(t, "cap_embedder.linear", h, m.captionChannels(), 1, Role.TEXT_TOKEN, true);
        t.add(new Tensor("x_pad_token", new long[] {1, h}, 1, true, Role.NONE));
        t.add(new Tensor("cap_pad_token", new long[] {1, h}, 1, true, Role.NONE));
        String[] stacks = {"layers", "noise_refiner", "context_refiner"};
        int[] depths = {m.depth(), r, r};
        Role[] roles = {Role.JOINT_TOKEN, Role.IMAGE_TOKEN, Role.TEXT_TOKEN};
        for (int i = 0; i < stacks.length; i++) {
            String s = stacks[i];
            int n = depths[i];
            attention(t, s + ".attn", h, n, roles[i], roles[i], false);
            rmsNorm(t, s + ".attn.norm_q", headDim, n);
            rmsNorm(t, s + ".attn.norm_k", headDim, n);
            linear(t, s + ".mlp.w1", f, h, n, roles[i], false);
            linear(t, s + ".mlp.w2", h, f, n, roles[i], false);
            linear(t, s + ".mlp.w3", f, h, n, roles[i], false);
            rmsNorm(t, s + ".norms", 4 * h, n);
            if (i < 2) {
                linear(t, s + ".adaLN_modulation", 4 * h, e, n, Role.SAMPLE, true);
            }
        }
        linear(t, "final_layer.linear", (long) p * p * c, h, 1, Role.IMAGE_TOKEN, true);
        linear(t, "final_layer.adaLN_modulation", h, e, 1, Role.SAMPLE, true);
    }

    /** q, k, v and output projections as four linears (queries per {@code qRole}, keys per {@code kvRole}). */
    private static void attention(List<Tensor> t, String name, long h, int count, Role qRole, Role kvRole, boolean bias) {
        if (count == 0) {
            return;
        }
        linear(t, name + ".to_q", h, h, count, qRole, bias);
        linear(t, name + ".to_k", h, h, count, kvRole, bias);
        linear(t, name + ".to_v", h, h, count, kvRole, bias);
        linear(t, name + ".to_out", h, h, count, qRole, bias);
    }

    private static void rmsNorm(List<Tensor> t, String name, long width, int count) {
        if (count > 0) {
            t.add(new Tensor(name + ".weight", new long[] {width}, count, true, Role.NONE));
        }
    }

    private static void layerNorm(List<Tensor> t, String name, long width, int count) {
        if (count > 0) {
            t.add(new Tensor(name + ".weight", new long[] {width}, count, true, Role.NONE));
            t.add(new Tensor(name + ".bias", new long[] {width}, count, true, Role.NONE));
        }
    }
}
