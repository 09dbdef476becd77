package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;

/** DiT-XL/2 at 256 px on one A100 with precomputed latents, running as predicted: the control group. */
final class HealthyDitScenario extends BaseScenario {

    static final String RUN_ID = "demo-dit-xl-2-healthy";

    HealthyDitScenario(Estimator estimator) {
        // A batch near the largest that fits: a run that also uses its GPU well raises nothing at all.
        this(estimator, spec("dit-xl-2", "a100-80gb", 1, 96, 256, "bf16", "adamw", false, true, "precomputed",
                400_000));
    }

    private HealthyDitScenario(Estimator estimator, RunSpec spec) {
        super(RUN_ID, "synthetic (demo): healthy DiT-XL/2, 256 px, 1×A100-80GB, running as predicted", spec,
                "synthetic-demo-node-1", "NVIDIA A100-SXM4-80GB",
                Expectation.of(estimator, spec, new Expectation((long) (71 * GIB), 0.61, (long) (80 * GIB))));
    }

    @Override
    public long firstStep() {
        return 152_300;
    }

    @Override
    public double stepSeconds(long step, double elapsedSeconds) {
        return expected.stepSeconds() * (1.0 + 0.03 * jitter(step));
    }

    @Override
    public double dataSeconds(long step, double elapsedSeconds) {
        return stepSeconds(step, elapsedSeconds) * (0.02 + 0.01 * Math.abs(jitter(step + 7)));
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        long used = (long) (expected.peakWithin(0.9) * (0.97 + 0.005 * jitter(Noise.timeKey(elapsedSeconds, 9))));
        return healthyGpu(index, elapsedSeconds, used);
    }
}
