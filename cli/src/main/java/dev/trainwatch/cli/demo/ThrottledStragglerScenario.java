package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import java.util.List;

/**
 * PixArt-α on eight A100s where one GPU overheats and throttles its clocks seconds in: every step waits for
 * that rank at the gradient all-reduce, so the whole run slows by the clock ratio while the other seven GPUs wait.
 */
final class ThrottledStragglerScenario extends Scenario {

    static final String RUN_ID = "demo-pixart-alpha-8gpu-straggler";
    static final int STRAGGLER = 5;
    /** Scenario second at which it starts to throttle. */
    static final double THROTTLE_FROM_SECONDS = 3;

    private static final long MAX_CLOCK_HZ = 1_410_000_000L;
    private static final long THROTTLED_CLOCK_HZ = 1_005_000_000L;

    ThrottledStragglerScenario(Estimator estimator) {
        // A batch that uses the GPUs' memory well, so the story stays the throttled GPU.
        super(RUN_ID, "synthetic (demo): PixArt-α 512 px on 8×A100-80GB with one thermally throttled straggler",
                spec("pixart-alpha-xl-2", "a100-80gb", 8, 80, 512, "bf16", "adamw", true, true, "precomputed",
                        200_000), "synthetic-demo-node-4", "NVIDIA A100-SXM4-80GB", estimator,
                new Expectation((long) (66 * GIB), 5.1, (long) (80 * GIB)));
    }

    boolean throttled(double elapsedSeconds) {
        return elapsedSeconds >= THROTTLE_FROM_SECONDS;
    }

    @Override
    public long firstStep() {
        return 64_020;
    }

    @Override
    public double stepSeconds(long step, double elapsedSeconds) {
        double slowdown = throttled(elapsedSeconds) ? (double) MAX_CLOCK_HZ / THROTTLED_CLOCK_HZ : 1.0;
        return expected.stepSeconds() * slowdown * (1.0 + 0.02 * jitter(step));
    }

    @Override
    public double dataSeconds(long step, double elapsedSeconds) {
        return stepSeconds(step, elapsedSeconds) * 0.02;
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        long used = (long) (expected.peakWithin(0.9) * (0.97 + 0.004 * jitter(Noise.timeKey(elapsedSeconds, 20 + index))));
        if (!throttled(elapsedSeconds)) {
            return healthyGpu(index, elapsedSeconds, used);
        }
        long key = Noise.timeKey(elapsedSeconds, index);
        if (index == STRAGGLER) {
            return new GpuReading(expected.gpuMemoryBytes(), used, 1.0, 0.97, 0.99, 0.0, THROTTLED_CLOCK_HZ,
                    MAX_CLOCK_HZ, 300 + 10 * jitter(key), 400, 90 + 1.5 * jitter(key + 1),
                    List.of("sw_thermal_slowdown", "hw_thermal_slowdown"));
        }
        // The others finish early and wait in the all-reduce for the straggler.
        double mean = clamp(0.74 + 0.04 * jitter(key + 2), 0, 1);
        return new GpuReading(expected.gpuMemoryBytes(), used, clamp(mean + 0.1 * jitter(key + 3), 0, 1), 0.0,
                mean, clamp(0.22 + 0.04 * jitter(key + 4), 0, 1), MAX_CLOCK_HZ, MAX_CLOCK_HZ,
                290 + 20 * jitter(key + 5), 400, 64 + 2 * jitter(key + 6), List.of());
    }
}
