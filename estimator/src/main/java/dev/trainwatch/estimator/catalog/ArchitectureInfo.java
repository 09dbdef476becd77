package dev.trainwatch.estimator.catalog;

/**
 * What share of its dense peak a GPU architecture reaches in DiT-family training, per dtype. Read from the
 * {@code architectures} section of {@code gpus.json}; fitted on the published-measurement set. Immutable.
 *
 * @param name  {@code volta}, {@code turing}, {@code ampere}, {@code ada}, {@code hopper}, {@code blackwell}
 * @param half  fp16/bf16 tensor-core GEMMs
 * @param tf32  TF32 tensor-core GEMMs (also the basis of fp32 attention through 3xTF32 kernels)
 * @param fp32  SIMT fp32 GEMMs
 */
public record ArchitectureInfo(String name, double half, double tf32, double fp32) {
}
