package dev.trainwatch.estimator.catalog;

import java.util.List;

/**
 * One trainable model of the catalog: its architecture (from which parameters and FLOPs are derived), the frozen
 * encoders it uses and the defaults of its reference training recipe. Loaded from {@code models.json}; immutable.
 *
 * @param id                  catalog id, e.g. {@code pixart-sigma-xl-2}
 * @param name                display name
 * @param family              model family: {@code dit}, {@code pixart}, {@code sana}, {@code opensora}
 * @param architecture        block layout the counts are derived from: {@code dit}, {@code pixart}, {@code sana},
 *                            {@code stdit}, {@code stdit3}, {@code mmdit}
 * @param depth               transformer blocks (double-stream blocks for {@code mmdit})
 * @param singleDepth         single-stream blocks ({@code mmdit} only)
 * @param hidden              hidden width h
 * @param heads               attention heads
 * @param headDim             head width of linear attention (Sana)
 * @param patch               spatial patch size p
 * @param patchT              temporal patch size (video)
 * @param mlpRatio            MLP width / h
 * @param ffnHidden           Mix-FFN width F (Sana)
 * @param latentChannels      channels of the autoencoder latent
 * @param latentDownsample    spatial downsampling factor of the autoencoder (8 for SD VAE, 32 for DC-AE)
 * @param temporalDownsample  temporal downsampling factor of a video autoencoder (1 when frames map 1:1)
 * @param learnSigma          output predicts variance too (doubles the output channels)
 * @param numClasses          class-label table size (DiT), 0 otherwise
 * @param posEmbedResolution  image side the fixed sin-cos position table is built for (DiT counts it in numel)
 * @param vae                 encoder id of the autoencoder
 * @param textEncoder         encoder id of the text encoder, null for class-conditional models
 * @param textTokens          caption tokens per sample
 * @param captionChannels     width of the text features
 * @param vectorChannels      width of a pooled text vector (MMDiT)
 * @param attentionUpcast     attention computed in fp32 even under autocast (PixArt/Sana {@code fp32_attention})
 * @param sizeEmbedders       PixArtMS resolution and aspect-ratio embedders
 * @param video               frames are part of the input
 * @param vaeMicroBatch       images the training pipeline passes to the VAE at once (Open-Sora's
 *                            {@code micro_batch_size}); 0 means the whole batch at once
 * @param defaults            the reference recipe's settings, used for fields a spec leaves unsaid
 * @param publishedParams     the parameter count the authors state, as a plain number (for comparison only)
 * @param publishedAs         the count as the authors print it, when that differs from a plain number: Open-Sora
 *                            prints with a base of 1024, so its "724M" is 724 x 2^20 = 759,169,024 parameters
 * @param publishedSource     where that count is stated
 * @param configNames         model names used in training configs that mean this model
 * @param aliases             other names a user may type for this model ({@code flux-dev}, {@code wan2.1-14b}); matched
 *                            ignoring case
 * @param guidanceEmbed       a distilled-guidance embedder (Flux.1-dev, HunyuanVideo) beside the timestep embedder
 * @param refinerDepth        refiner blocks before the main stack: HunyuanVideo's text-token refiner, Z-Image's noise
 *                            and context refiners (each this deep)
 * @param captionNorm         an RMSNorm over the text features before their projection (Qwen-Image, Z-Image)
 * @param dualAttentionDepth  leading joint blocks with a second image self-attention (SD3.5-medium's MMDiT-X)
 * @param timeEmbedDim        width of the timestep embedding the blocks' modulation reads (CogVideoX: 512), 0 when it
 *                            is the hidden width
 * @param experts             interchangeable transformers of the same shape, one trained at a time (Wan 2.2 A14B: 2
 *                            noise-level experts); 0 or 1 for an ordinary model. Counts are per expert.
 */
public record ModelInfo(
        String id,
        String name,
        String family,
        String architecture,
        int depth,
        int singleDepth,
        int hidden,
        int heads,
        int headDim,
        int patch,
        int patchT,
        double mlpRatio,
        int ffnHidden,
        int latentChannels,
        int latentDownsample,
        int temporalDownsample,
        boolean learnSigma,
        int numClasses,
        int posEmbedResolution,
        String vae,
        String textEncoder,
        int textTokens,
        int captionChannels,
        int vectorChannels,
        boolean attentionUpcast,
        boolean sizeEmbedders,
        boolean video,
        int vaeMicroBatch,
        Defaults defaults,
        long publishedParams,
        String publishedAs,
        String publishedSource,
        List<String> configNames,
        List<String> aliases,
        boolean guidanceEmbed,
        int refinerDepth,
        boolean captionNorm,
        int dualAttentionDepth,
        int timeEmbedDim,
        int experts) {

    /** Absent names, lists and defaults as the id, empty lists and no defaults; negative counts as 0. */
    public ModelInfo {
        name = name == null ? id : name;
        defaults = defaults == null ? new Defaults(null, null, null, null, null, null, null, null, null) : defaults;
        configNames = configNames == null ? List.of() : List.copyOf(configNames);
        aliases = aliases == null ? List.of() : List.copyOf(aliases);
        refinerDepth = Math.max(0, refinerDepth);
        dualAttentionDepth = Math.max(0, dualAttentionDepth);
        timeEmbedDim = Math.max(0, timeEmbedDim);
        experts = Math.max(0, experts);
    }

    /** Pixels per latent cell along one side times the patch: pixels per token along one side. */
    public int pixelsPerToken() {
        return latentDownsample * patch;
    }

    /** The published figure as its authors wrote it ("724M", "1.1B"), or the plain count in millions. */
    public String publishedText() {
        if (publishedAs != null && !publishedAs.isBlank()) {
            return publishedAs;
        }
        return Math.round(publishedParams / 1e6) + "M";
    }

    /** The recipe defaults of a model. Null fields mean "no default" (the spec must say). */
    public record Defaults(
            Integer resolution,
            Integer frames,
            String precision,
            String optimizer,
            Boolean ema,
            Boolean gradCheckpointing,
            String features,
            String attention,
            Integer zero) {
    }
}
