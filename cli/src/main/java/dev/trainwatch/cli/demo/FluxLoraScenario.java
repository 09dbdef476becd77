package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/**
 * A Flux.1-dev LoRA on one 24 GB RTX 4090 as kohya's sd-scripts trains it there: rank 16 on the blocks' linears, the
 * frozen base in fp8, 8-bit AdamW, cached latents and captions, 1024 px. It fits and runs as predicted: the everyday
 * run of today's DiT users, next to the seed models'.
 */
final class FluxLoraScenario extends BaseScenario {

    static final String RUN_ID = "demo-flux-lora-4090";

    FluxLoraScenario(Estimator estimator) {
        this(estimator, spec("flux.1-dev", "rtx4090", 1, 1, 1024, "bf16", "adamw8bit", true, false, "precomputed", 3_000)
                .withPhysics(null, null, 16, List.of("attention", "mlp", "modulation"), null, null)
                .withTrainer("fp8", null));
    }

    private FluxLoraScenario(Estimator estimator, RunSpec spec) {
        super(RUN_ID, "synthetic (demo): Flux.1-dev LoRA rank 16, fp8 base, 1024 px, 1×RTX 4090 24 GB, running as"
                + " predicted", spec, "synthetic-demo-node-5", "NVIDIA GeForce RTX 4090",
                Expectation.of(estimator, spec, new Expectation((long) (15.7 * GIB), 3.2, (long) (24 * GIB))));
    }

    @Override
    public long firstStep() {
        return 1_240;
    }

    @Override
    public double stepSeconds(long step, double elapsedSeconds) {
        return expected.stepSeconds() * (1.0 + 0.03 * jitter(step));
    }

    @Override
    public double dataSeconds(long step, double elapsedSeconds) {
        // Latents and captions come from the cache: the loader waits a few milliseconds.
        return stepSeconds(step, elapsedSeconds) * (0.01 + 0.005 * Math.abs(jitter(step + 5)));
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        long used = (long) (expected.peakWithin(0.9) * (0.97 + 0.005 * jitter(Noise.timeKey(elapsedSeconds, 4))));
        return healthyGpu(index, elapsedSeconds, used);
    }
}
