package dev.trainwatch.estimator.catalog;

/**
 * A frozen encoder (text encoder or autoencoder) that runs every step when features are computed online. Loaded
 * from {@code encoders.json}; immutable. Fields that do not apply to a kind are 0.
 *
 * @param id                      catalog id, e.g. {@code t5-xxl}
 * @param name                    display name
 * @param kind                    {@code text} or {@code vae}
 * @param params                  parameters of the module as loaded on the GPU
 * @param encoderParams           parameters of the image encoder half (VAE)
 * @param hidden                  width of a text encoder
 * @param downsample              spatial downsampling of a VAE
 * @param temporalDownsample      temporal downsampling of a video VAE (0 or 1 when none)
 * @param latentChannels          latent channels of a VAE
 * @param encoderMacsPerPixel     image-encoder MACs per input pixel
 * @param transientBytesPerPixel  no-grad working memory of the image encoder per input pixel
 * @param midAttentionDownsample  the VAE mid-block attends over (H/f)·(W/f) tokens; 0 when it has no full attention
 * @param midAttentionWidth       channel width of that attention
 * @param transientBytesPerToken  no-grad working memory of a text encoder per prompt token
 */
public record EncoderInfo(
        String id,
        String name,
        String kind,
        long params,
        long encoderParams,
        int hidden,
        int downsample,
        int temporalDownsample,
        int latentChannels,
        long encoderMacsPerPixel,
        long transientBytesPerPixel,
        int midAttentionDownsample,
        int midAttentionWidth,
        long transientBytesPerToken) {
}
