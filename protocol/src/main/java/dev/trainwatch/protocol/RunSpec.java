package dev.trainwatch.protocol;

/**
 * What a training run is, as far as cost is concerned: the input of the estimator and the body of
 * {@code PUT /v1/runs/{run_id}}. Every field is optional on the wire (null = "not said"); the estimator fills
 * defaults and reports the resolved spec back. Immutable and thread-safe.
 *
 * @param model             model id from the catalog, e.g. {@code pixart-sigma-xl-2}
 * @param gpu               GPU id or NVML device name, e.g. {@code a100-80gb} or {@code NVIDIA A100-SXM4-80GB}
 * @param gpus              data-parallel size (number of GPUs the batch is replicated over)
 * @param batch             samples per GPU per micro-step
 * @param resolution        square image side in pixels (ignored when height and width are given)
 * @param height            image height in pixels
 * @param width             image width in pixels
 * @param frames            video frames (video models only)
 * @param precision         {@code fp32}, {@code tf32}, {@code fp16} or {@code bf16}
 * @param optimizer         {@code adamw}, {@code adamw8bit}, {@code came}, {@code came8bit}, {@code adafactor}, {@code sgd}
 * @param gradCheckpointing full activation recomputation
 * @param ema               an fp32 EMA copy of the weights is kept on the GPU
 * @param features          {@code online} (text/VAE encoders run every step) or {@code precomputed}
 * @param zero              ZeRO stage 0–3 (3 also stands for FSDP full sharding)
 * @param attention         {@code flash} (fused/SDPA) or {@code math}
 * @param gradAccumulation  micro-steps per optimizer step
 * @param totalSteps        planned number of steps (for ETA and total time)
 */
public record RunSpec(
        String model,
        String gpu,
        Integer gpus,
        Integer batch,
        Integer resolution,
        Integer height,
        Integer width,
        Integer frames,
        String precision,
        String optimizer,
        Boolean gradCheckpointing,
        Boolean ema,
        String features,
        Integer zero,
        String attention,
        Integer gradAccumulation,
        Long totalSteps) {

    /** An empty spec, every field unsaid. */
    public static RunSpec empty() {
        return new RunSpec(null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null);
    }

    /** Fields of {@code override} that are set replace those of this spec (flags over a config file). */
    public RunSpec overriddenBy(RunSpec override) {
        if (override == null) {
            return this;
        }
        return new RunSpec(
                pick(override.model, model),
                pick(override.gpu, gpu),
                pick(override.gpus, gpus),
                pick(override.batch, batch),
                pick(override.resolution, resolution),
                pick(override.height, override.resolution != null ? null : height),
                pick(override.width, override.resolution != null ? null : width),
                pick(override.frames, frames),
                pick(override.precision, precision),
                pick(override.optimizer, optimizer),
                pick(override.gradCheckpointing, gradCheckpointing),
                pick(override.ema, ema),
                pick(override.features, features),
                pick(override.zero, zero),
                pick(override.attention, attention),
                pick(override.gradAccumulation, gradAccumulation),
                pick(override.totalSteps, totalSteps));
    }

    private static <T> T pick(T preferred, T fallback) {
        return preferred != null ? preferred : fallback;
    }
}
