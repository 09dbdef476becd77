package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.IntToDoubleFunction;

/**
 * A run for one detector evaluation, built by hand: the real estimator's estimate of {@link #spec}, GPUs, node memory
 * and step reports as the test states them (what the fleet's windows would hold).
 */
final class LoraRun implements RunContext {

    static final Estimator ESTIMATOR = Estimator.bundled();
    static final double GIB = 1L << 30;

    final double now;
    RunSpec spec;
    Estimate estimate;
    final List<GpuSeries> gpus = new ArrayList<>();
    final List<HostMemorySeries> nodes = new ArrayList<>();
    final List<RankProcess> ranks = new ArrayList<>();
    StepSeries steps = new Steps(0, 0, 0);
    double samplingTs = Double.NaN;

    LoraRun(double now, RunSpec spec) {
        this.now = now;
        this.spec = spec;
        this.estimate = spec == null ? null : ESTIMATOR.estimate(spec);
    }

    /** A kohya/musubi-style LoRA: rank 16, 8-bit AdamW, gradient checkpointing, cached latents and text outputs. */
    static RunSpec lora(String model, String gpu, Integer height, Integer width, Integer frames, String base,
                        Integer blocks) {
        return new RunSpec(model, gpu, 1, 1, null, height, width, frames, "bf16", "adamw8bit", true, false,
                "precomputed", null, null, null, null, null, null, null, null, null, null, null, null, 16, null, null,
                null, base, blocks, null, null);
    }

    @Override public String runId() { return "lora"; }
    @Override public double now() { return now; }
    @Override public RunSpec spec() { return spec; }
    @Override public Estimate estimate() { return estimate; }
    @Override public StepSeries steps() { return steps; }
    @Override public RankSeries ranks() { return RankSeries.NONE; }
    @Override public List<GpuSeries> gpus() { return gpus; }
    @Override public List<XidRecord> xids() { return List.of(); }
    @Override public List<AgentStatus> agents() { return List.of(); }
    @Override public OptionalInt latentDownsample() { return OptionalInt.empty(); }
    @Override public List<RankProcess> rankProcesses() { return ranks; }
    @Override public List<HostMemorySeries> hostMemory() { return nodes; }
    @Override public double samplingTs() { return samplingTs; }
    @Override public boolean isActive(AnomalyKind kind) { return false; }

    @Override
    public Estimate whatIf(RunSpec variant) {
        try {
            return ESTIMATOR.estimate(variant);
        } catch (InvalidSpecException e) {
            return null;
        }
    }

    /** {@code n} step reports of {@code seconds} each, one every {@code every} s, the newest at now. */
    record Steps(int n, double seconds, double every, double now) implements StepSeries {
        Steps(int n, double seconds, double every) {
            this(n, seconds, every, Double.NaN);
        }
        @Override public int size() { return n; }
        @Override public double ts(int i) { return now - (n - 1 - i) * every; }
        @Override public long step(int i) { return 100 + i; }
        @Override public double timeS(int i) { return seconds; }
        @Override public double dataTimeS(int i) { return Double.NaN; }
        @Override public double modelTimeS(int i) { return Double.NaN; }
        @Override public double lmTimeS(int i) { return Double.NaN; }
        @Override public double vaeTimeS(int i) { return Double.NaN; }
        @Override public int intervalSteps(int i) { return 1; }
        @Override public double samples(int i) { return 1; }
        @Override public int rank(int i) { return -1; }
        @Override public int bucketHeight(int i) { return -1; }
        @Override public int bucketWidth(int i) { return -1; }
    }

    /** A GPU polled every 5 s for five minutes up to now; each reading a function of the entry's index. */
    static final class Gpu implements GpuSeries {
        static final int ENTRIES = 60;
        final String name;
        final double total;
        final double now;
        IntToDoubleFunction memory = i -> Double.NaN;
        IntToDoubleFunction utilization = i -> 0.97;
        IntToDoubleFunction smActive = i -> Double.NaN;
        IntToDoubleFunction pcieRx = i -> Double.NaN;
        List<OtherProcess> others = List.of();

        Gpu(String name, double totalBytes, double now) {
            this.name = name;
            this.total = totalBytes;
            this.now = now;
        }

        @Override public String uuid() { return "GPU-0"; }
        @Override public String host() { return "node-1"; }
        @Override public int index() { return 0; }
        @Override public String name() { return name; }
        @Override public double memoryTotalBytes() { return total; }
        @Override public boolean lost() { return false; }
        @Override public int size() { return ENTRIES; }
        @Override public double ts(int i) { return now - (ENTRIES - 1 - i) * 5.0; }
        @Override public double memoryUsedBytes(int i) { return memory.applyAsDouble(i); }
        @Override public double utilizationRatio(int i) { return utilization.applyAsDouble(i); }
        @Override public double utilizationMinRatio(int i) { return utilization.applyAsDouble(i); }
        @Override public double idleFraction(int i) { return 0; }
        @Override public double smClockHz(int i) { return 2.52e9; }
        @Override public double smClockMaxHz(int i) { return 2.52e9; }
        @Override public double powerWatts(int i) { return 300; }
        @Override public double temperatureCelsius(int i) { return 60; }
        @Override public int clockEventMask(int i) { return 0; }
        @Override public double smActiveRatio(int i) { return smActive.applyAsDouble(i); }
        @Override public double pcieRxBytesPerSecond(int i) { return pcieRx.applyAsDouble(i); }
        @Override public List<OtherProcess> otherProcesses() { return others; }
    }

    /** A node's memory read every 5 s for ten minutes up to now; MemAvailable a function of the reading's age. */
    record Node(double totalBytes, double now, IntToDoubleFunction available) implements HostMemorySeries {
        static final int READINGS = 120;
        @Override public String host() { return "node-1"; }
        @Override public int size() { return READINGS; }
        @Override public double ts(int i) { return now - (READINGS - 1 - i) * 5.0; }
        @Override public double memTotalBytes(int i) { return totalBytes; }
        @Override public double memAvailableBytes(int i) { return available.applyAsDouble(i); }
        @Override public double shmTotalBytes(int i) { return Double.NaN; }
        @Override public double shmUsedBytes(int i) { return Double.NaN; }
    }
}
