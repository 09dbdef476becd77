package dev.trainwatch.cli.demo;

import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/** What the bundled scenarios share: identity, the expectation they deviate from, a healthy GPU. */
abstract class BaseScenario implements Scenario {

    static final double GIB = 1024.0 * 1024 * 1024;

    private final String runId;
    private final String title;
    private final RunSpec spec;
    private final String host;
    private final String gpuName;
    private final long seed;
    final Expectation expected;

    BaseScenario(String runId, String title, RunSpec spec, String host, String gpuName, Expectation expected) {
        if (!runId.startsWith("demo-")) {
            throw new IllegalArgumentException("synthetic run ids start with demo-: " + runId);
        }
        this.runId = runId;
        this.title = title;
        this.spec = spec;
        this.host = host;
        this.gpuName = gpuName;
        this.seed = runId.hashCode();
        this.expected = expected;
    }

    @Override
    public String runId() {
        return runId;
    }

    @Override
    public String title() {
        return title;
    }

    @Override
    public RunSpec spec() {
        return spec;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public String gpuName() {
        return gpuName;
    }

    @Override
    public int gpuCount() {
        return spec.gpus() == null ? 1 : spec.gpus();
    }

    @Override
    public double samplesPerStep() {
        return (double) spec.batch() * gpuCount();
    }

    @Override
    public double loss(long step) {
        return 0.12 + 0.25 * Math.exp(-step / 40_000.0) + 0.01 * Noise.signed(seed, step);
    }

    /** Noise in [-1, 1) for a key; scenarios use it for jitter. */
    double jitter(long key) {
        return Noise.signed(seed, key);
    }

    /** A busy, healthy GPU at full clock holding {@code usedBytes}. */
    GpuReading healthyGpu(int index, double elapsedSeconds, long usedBytes) {
        long key = Noise.timeKey(elapsedSeconds, index);
        double util = clamp(0.96 + 0.03 * jitter(key), 0, 1);
        return new GpuReading(expected.gpuMemoryBytes(), usedBytes, util, clamp(util - 0.08, 0, 1), util, 0.0,
                1_410_000_000L, 1_410_000_000L, 355 + 20 * jitter(key + 1), 400, 63 + 2 * jitter(key + 2),
                List.of());
    }

    static double clamp(double value, double low, double high) {
        return Math.max(low, Math.min(high, value));
    }

    static RunSpec spec(String model, String gpu, int gpus, int batch, int resolution, String precision,
                        String optimizer, boolean gradCheckpointing, boolean ema, String features, long totalSteps) {
        return new RunSpec(model, gpu, gpus, batch, resolution, null, null, null, precision, optimizer,
                gradCheckpointing, ema, features, 0, null, null, totalSteps);
    }
}
