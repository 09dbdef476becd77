package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import java.util.List;

/**
 * PixArt-Σ at 1024 px encoding T5-XXL and VAE features online, with a data loader that cannot keep up: most of
 * each step is spent before the forward pass ({@code time_data} dominating), and the GPU sits idle in between.
 */
final class StarvedPixArtSigmaScenario extends Scenario {

    static final String RUN_ID = "demo-pixart-sigma-online-features";

    /** Observed step time against the prediction: the loader adds what the estimator cannot know. */
    private static final double SLOWDOWN = 1.6;
    /** Share of each step spent waiting for data and online encoders. */
    private static final double DATA_SHARE = 0.66;

    StarvedPixArtSigmaScenario(Estimator estimator) {
        super(RUN_ID, "synthetic (demo): PixArt-Σ 1024 px, T5/VAE features encoded online, a data loader starving the GPU",
                spec("pixart-sigma-xl-2", "a800-80gb", 1, 4, 1024, "bf16", "came", true, false, "online", 100_000),
                "synthetic-demo-node-2", "NVIDIA A800-SXM4-80GB", estimator,
                new Expectation((long) (46 * GIB), 2.4, (long) (80 * GIB)));
    }

    @Override
    public long firstStep() {
        return 8_410;
    }

    @Override
    public double stepSeconds(long step, double elapsedSeconds) {
        return expected.stepSeconds() * SLOWDOWN * (1.0 + 0.08 * jitter(step));
    }

    @Override
    public double dataSeconds(long step, double elapsedSeconds) {
        return stepSeconds(step, elapsedSeconds) * (DATA_SHARE + 0.05 * jitter(step + 11));
    }

    @Override
    public GpuReading gpu(int index, double elapsedSeconds) {
        long key = Noise.timeKey(elapsedSeconds, index);
        // Bursts of compute between long waits: the point reading swings, the buffered samples show the gaps.
        double phase = (elapsedSeconds % 4.0) / 4.0;
        double util = phase < 0.4 ? 0.9 + 0.08 * jitter(key) : 0.05 + 0.05 * Math.abs(jitter(key));
        double idle = clamp(0.55 + 0.08 * jitter(key + 1), 0, 1);
        double mean = clamp(0.36 + 0.06 * jitter(key + 2), 0, 1);
        long used = (long) (expected.peakWithin(0.85) * (0.96 + 0.01 * jitter(key + 3)));
        return new GpuReading(expected.gpuMemoryBytes(), used, clamp(util, 0, 1), 0.0, mean, idle,
                1_410_000_000L, 1_410_000_000L, 190 + 60 * Math.abs(jitter(key + 4)), 400, 52 + 2 * jitter(key + 5),
                util < 0.2 ? List.of("gpu_idle") : List.of());
    }
}
