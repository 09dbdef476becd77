package dev.trainwatch.estimator;

/**
 * A group of identical transformer blocks as the memory and time models see them. Immutable.
 *
 * @param blocks                  number of blocks in the group
 * @param tokensPerSample         tokens each block processes per sample
 * @param savedBytesAmp           bytes saved for backward per token per hidden unit per block under autocast
 * @param savedBytesFp32          the same in pure fp32
 * @param attentionScoresPerSample softmax-attention score elements per sample per block (heads · seq² · sequences);
 *                                0 for linear attention
 * @param attentionMacsPerSample  attention MACs (QKᵀ and AV, or the linear-attention products) per sample per block
 * @param textKvBytesPerSample    cross-attention keys and values of the caption per sample per block, in elements
 */
record LayerPlan(
        int blocks,
        long tokensPerSample,
        double savedBytesAmp,
        double savedBytesFp32,
        double attentionScoresPerSample,
        double attentionMacsPerSample,
        double textKvBytesPerSample) {
}
