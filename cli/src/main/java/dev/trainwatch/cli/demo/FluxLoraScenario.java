package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import java.util.List;

/** A Flux.1-dev LoRA on one RTX 4090 as kohya trains it (rank 16, fp8 base, 8-bit AdamW), running as predicted. */
final class FluxLoraScenario extends HealthyDitScenario {

    static final String RUN_ID = "demo-flux-lora-4090";

    FluxLoraScenario(Estimator estimator) {
        // Latents and captions come from the cache: the loader waits a few milliseconds.
        super(RUN_ID, "synthetic (demo): Flux.1-dev LoRA rank 16, fp8 base, 1024 px, 1×RTX 4090 24 GB, running as"
                + " predicted", spec("flux.1-dev", "rtx4090", 1, 1, 1024, "bf16", "adamw8bit", true, false,
                "precomputed", 3_000).withPhysics(null, null, 16, List.of("attention", "mlp", "modulation"), null, null)
                .withTrainer("fp8", null), "synthetic-demo-node-5", "NVIDIA GeForce RTX 4090", estimator,
                new Expectation((long) (15.7 * GIB), 3.2, (long) (24 * GIB)), 1_240, 0.01, 5, 4);
    }
}
