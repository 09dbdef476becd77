package dev.trainwatch.estimator.catalog;

/**
 * What the step-time model needs to know about a GPU architecture beyond one card's datasheet. Read from the
 * {@code architectures} section of {@code gpus.json}. Immutable.
 *
 * @param name          {@code volta}, {@code turing}, {@code ampere}, {@code ada}, {@code hopper}, {@code blackwell}
 * @param tileM         rows of the output tile a cuBLAS tensor-core GEMM kernel computes per thread block
 * @param tileN         its columns (Hopper's warpgroup kernels use 128 x 256)
 * @param mmaSyncShare  the share of the dense tensor peak that kernels built on warp-level {@code mma.sync} (FlashAttention-2,
 *                      xformers/cutlass) can reach: 1 up to Ada; about half on Hopper and Blackwell, whose full rate
 *                      needs warpgroup MMAs (FlashAttention-3 paper: FlashAttention-2 reaches 35% of an H100's peak
 *                      against 70% of an A100's)
 * @param eagerShare    the share of the priced rate (GEMMs, attention, element-wise, encoders) that eager PyTorch
 *                      training with fp32 parameters under autocast (torch AMP, accelerate) reaches on this
 *                      architecture: 1 up to Ada; on Hopper read from the one published A100/H100 pair of such a stack
 *                      (docs/ESTIMATOR.md, "Eager on Hopper"); not applied to {@code --kernels compiled}
 * @param mixedEagerShare the same share for eager runs with half parameters and fp32 master weights ({@code --weights
 *                      mixed}: ColossalAI's booster, which every published eager Hopper step of the set ran on, where
 *                      DiT, STDiT and MMDiT steps take 2–3x their operations at the datasheet rates); fitted on those
 *                      rows; equal to {@code eagerShare} where the catalog gives none
 */
public record ArchitectureInfo(String name, int tileM, int tileN, double mmaSyncShare, double eagerShare,
        double mixedEagerShare) {
}
