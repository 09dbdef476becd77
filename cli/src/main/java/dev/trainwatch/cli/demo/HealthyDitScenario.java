package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;

/**
 * DiT-XL/2 at 256 px on one A100 with precomputed latents, running as predicted: the control group. Also the shape of
 * any run that runs as predicted ({@link FluxLoraScenario}): steady steps, a small data wait, a busy healthy GPU.
 */
class HealthyDitScenario extends Scenario {

    static final String RUN_ID = "demo-dit-xl-2-healthy";

    private final long firstStep;
    private final double dataShare;
    private final long dataKey;
    private final int gpuKey;

    HealthyDitScenario(Estimator estimator) {
        // A batch near the largest that fits: a run that also uses its GPU well raises nothing at all.
        this(RUN_ID, "synthetic (demo): healthy DiT-XL/2, 256 px, 1×A100-80GB, running as predicted",
                spec("dit-xl-2", "a100-80gb", 1, 96, 256, "bf16", "adamw", false, true, "precomputed", 400_000),
                "synthetic-demo-node-1", "NVIDIA A100-SXM4-80GB", estimator, new Expectation((long) (71 * GIB), 0.61,
                (long) (80 * GIB)), 152_300, 0.02, 7, 9);
    }

    /** @param dataShare the data wait's share of a step, give or take half of it; the keys seed its and the GPU's noise */
    HealthyDitScenario(String runId, String title, RunSpec spec, String host, String gpuName, Estimator estimator,
            Expectation fallback, long firstStep, double dataShare, long dataKey, int gpuKey) {
        super(runId, title, spec, host, gpuName, estimator, fallback);
        this.firstStep = firstStep;
        this.dataShare = dataShare;
        this.dataKey = dataKey;
        this.gpuKey = gpuKey;
    }

    @Override
    public long firstStep() {
        return firstStep;
    }

    @Override
    public double stepSeconds(long step, double elapsedSeconds) {
        return expected.stepSeconds() * (1.0 + 0.03 * jitter(step));
    }

    @Override
    public double dataSeconds(long step, double elapsedSeconds) {
        return stepSeconds(step, elapsedSeconds) * (dataShare + dataShare / 2 * Math.abs(jitter(step + dataKey)));
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        long used = (long) (expected.peakWithin(0.9) * (0.97 + 0.005 * jitter(Noise.timeKey(elapsedSeconds, gpuKey))));
        return healthyGpu(index, elapsedSeconds, used);
    }
}
