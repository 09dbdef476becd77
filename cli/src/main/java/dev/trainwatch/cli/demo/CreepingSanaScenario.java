package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;

/**
 * Sana-1.6B whose memory creeps up step after step (as with tensors kept alive across steps), from the predicted
 * peak towards the GPU's capacity: an OOM coming, well before it happens.
 */
final class CreepingSanaScenario extends BaseScenario {

    static final String RUN_ID = "demo-sana-1600m-memory-creep";

    /** Scenario seconds from the predicted peak to the plateau just under capacity. */
    static final double CREEP_SECONDS = 75;
    /** The plateau, as a share of capacity: close enough to OOM that any larger bucket would fail. */
    static final double PLATEAU_SHARE = 0.975;

    CreepingSanaScenario(Estimator estimator) {
        this(estimator, spec("sana-1600m", "a100-80gb", 1, 16, 1024, "bf16", "came", true, true, "precomputed",
                60_000));
    }

    private CreepingSanaScenario(Estimator estimator, RunSpec spec) {
        super(RUN_ID, "synthetic (demo): Sana-1.6B 1024 px whose memory creeps towards OOM", spec,
                "synthetic-demo-node-3", "NVIDIA A100-SXM4-80GB",
                Expectation.of(estimator, spec, new Expectation((long) (48 * GIB), 1.9, (long) (80 * GIB))));
    }

    @Override
    public long firstStep() {
        return 21_950;
    }

    @Override
    public double stepSeconds(long step, double elapsedSeconds) {
        return expected.stepSeconds() * (1.02 + 0.03 * jitter(step));
    }

    @Override
    public double dataSeconds(long step, double elapsedSeconds) {
        return stepSeconds(step, elapsedSeconds) * 0.03;
    }

    /** Memory in use at scenario time {@code elapsedSeconds}: a linear creep, then a plateau. */
    long memoryUsedBytes(double elapsedSeconds) {
        double start = expected.peakWithin(0.75);
        double end = expected.gpuMemoryBytes() * PLATEAU_SHARE;
        double progress = clamp(elapsedSeconds / CREEP_SECONDS, 0, 1);
        return (long) (start + (end - start) * progress);
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        return healthyGpu(index, elapsedSeconds, memoryUsedBytes(elapsedSeconds));
    }
}
