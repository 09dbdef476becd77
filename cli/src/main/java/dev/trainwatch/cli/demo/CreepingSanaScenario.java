package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;

/**
 * Sana-1.6B whose memory creeps up step after step (as with tensors kept alive across steps), from the predicted
 * peak towards the GPU's capacity: an OOM coming, well before it happens.
 */
final class CreepingSanaScenario extends Scenario {

    static final String RUN_ID = "demo-sana-1600m-memory-creep";

    /** Scenario seconds of the fast creep, from the predicted peak to just under capacity. */
    static final double CREEP_SECONDS = 45;
    /** Where the fast creep ends, as a share of capacity: close enough to OOM that a larger bucket would fail. */
    static final double CREEP_END_SHARE = 0.972;
    /** Where the slow creep after it tends to: the run never quite runs out, so the demo can go on. */
    static final double FINAL_SHARE = 0.988;
    /** Time constant of the slow creep, scenario seconds. */
    static final double SLOW_CREEP_SECONDS = 300;

    CreepingSanaScenario(Estimator estimator) {
        super(RUN_ID, "synthetic (demo): Sana-1.6B 1024 px whose memory creeps towards OOM",
                spec("sana-1600m", "a100-80gb", 1, 16, 1024, "bf16", "came", true, true, "precomputed", 60_000),
                "synthetic-demo-node-3", "NVIDIA A100-SXM4-80GB", estimator,
                new Expectation((long) (48 * GIB), 1.9, (long) (80 * GIB)));
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

    /** Memory in use at scenario time {@code elapsedSeconds}: a fast linear creep, then a slow approach. */
    long memoryUsedBytes(double elapsedSeconds) {
        double capacity = expected.gpuMemoryBytes();
        double start = expected.peakWithin(0.75);
        double creepEnd = capacity * CREEP_END_SHARE;
        if (elapsedSeconds <= CREEP_SECONDS) {
            return (long) (start + (creepEnd - start) * clamp(elapsedSeconds / CREEP_SECONDS, 0, 1));
        }
        double slow = 1 - Math.exp(-(elapsedSeconds - CREEP_SECONDS) / SLOW_CREEP_SECONDS);
        return (long) (creepEnd + (capacity * FINAL_SHARE - creepEnd) * slow);
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        return healthyGpu(index, elapsedSeconds, memoryUsedBytes(elapsedSeconds));
    }
}
