package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;

/**
 * One synthetic run on one synthetic node: identity, spec, and what its GPUs and log show, as pure functions of
 * scenario time and step ({@link DemoFeed} keeps the state). Each deviates from (or keeps to) the estimator's
 * {@link Expectation} for its spec, on a healthy GPU unless it says otherwise. Immutable.
 */
public abstract class Scenario {

    static final double GIB = 1024.0 * 1024 * 1024;

    private final String runId;
    private final String title;
    private final RunSpec spec;
    private final String host;
    private final String gpuName;
    private final long seed;
    final Expectation expected;

    /** @param fallback what the scenario expects when the estimator cannot price {@code spec} */
    Scenario(String runId, String title, RunSpec spec, String host, String gpuName, Estimator estimator,
             Expectation fallback) {
        if (!runId.startsWith("demo-")) {
            throw new IllegalArgumentException("synthetic run ids start with demo-: " + runId);
        }
        this.runId = runId;
        this.title = title;
        this.spec = spec;
        this.host = host;
        this.gpuName = gpuName;
        this.seed = runId.hashCode();
        this.expected = Expectation.of(estimator, spec, fallback);
    }

    /** Always starts with {@code demo-} so a synthetic run is never mistaken for a real one. */
    public String runId() {
        return runId;
    }

    /** One line for people: what this scenario shows. */
    public String title() {
        return title;
    }

    public RunSpec spec() {
        return spec;
    }

    public String host() {
        return host;
    }

    /** NVML device name of the node's GPUs. */
    public String gpuName() {
        return gpuName;
    }

    /** The step the run is at when the scenario begins (runs are shown mid-flight). */
    public abstract long firstStep();

    /** Wall seconds of step {@code step}, finishing at scenario time {@code elapsedSeconds}. */
    public abstract double stepSeconds(long step, double elapsedSeconds);

    /** Seconds of that step spent before the forward pass (data loading, online encoders). */
    public abstract double dataSeconds(long step, double elapsedSeconds);

    /** What GPU {@code index} of the node reads at scenario time {@code elapsedSeconds}. */
    public abstract GpuReading gpu(int index, double elapsedSeconds);

    /** GPUs the run uses on its node. */
    public int gpuCount() {
        return spec.gpus() == null ? 1 : spec.gpus();
    }

    /** Samples per step over all ranks. */
    public double samplesPerStep() {
        return (double) spec.batch() * gpuCount();
    }

    /** Decays slowly; only for realism. */
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

    /** The five bundled scenarios of {@code trainwatch demo}, each predicted by {@code estimator}. */
    public static List<Scenario> bundled(Estimator estimator) {
        return List.of(
                new HealthyDitScenario(estimator),
                new StarvedPixArtSigmaScenario(estimator),
                new CreepingSanaScenario(estimator),
                new ThrottledStragglerScenario(estimator),
                new FluxLoraScenario(estimator));
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
