package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.DoubleFunction;
import java.util.function.IntToDoubleFunction;

/**
 * A run for one detector evaluation, built from fixture numbers (a scenario trace's phase, a real log's timeline, a
 * test's own figures): step reports, GPUs, rank processes, node memory and the phase the log announced, and with a
 * spec the real estimator's estimate of it (what the fleet's windows would hold).
 */
final class FakeRun implements QuietRun {

    static final Estimator ESTIMATOR = Estimator.bundled();
    static final double GIB = 1L << 30;

    double now;
    RunSpec spec;
    Estimate estimate;
    StepSeries steps = new Steps(List.of());
    RankSeries ranks = RankSeries.NONE;
    List<GpuSeries> gpus = new ArrayList<>();
    List<RankProcess> procs = List.of();
    final List<HostMemorySeries> nodes = new ArrayList<>();
    Map<Integer, String> gpuOfRank = Map.of();
    String phase;
    double phaseTs = Double.NaN;
    double samplingTs = Double.NaN;

    FakeRun(double now) {
        this.now = now;
    }

    FakeRun(double now, RunSpec spec) {
        this(now);
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

    /** One step report. */
    record Report(double ts, long step, double timeS, double dataS, double lmS, double vaeS, int interval) {
    }

    /** Reports every {@code everyS} up to {@code lastTs} with a scenario phase's step figures. */
    static List<Report> reports(Scenario.Steps s, int count, double lastTs, long firstStep) {
        List<Report> out = new ArrayList<>();
        int interval = s.intervalSteps() != null ? s.intervalSteps() : 1;
        for (int i = 0; i < count; i++) {
            out.add(new Report(lastTs - (count - 1 - i) * s.everyS(), firstStep + (long) i * interval, s.timeS(),
                    orNaN(s.dataTimeS()), orNaN(s.lmTimeS()), orNaN(s.vaeTimeS()), interval));
        }
        return out;
    }

    private static double orNaN(Double v) {
        return v == null ? Double.NaN : v;
    }

    record Steps(List<Report> r) implements QuietRun.FixtureSteps {
        @Override public int size() { return r.size(); }
        @Override public double ts(int i) { return r.get(i).ts(); }
        @Override public long step(int i) { return r.get(i).step(); }
        @Override public double timeS(int i) { return r.get(i).timeS(); }
        @Override public double dataTimeS(int i) { return r.get(i).dataS(); }
        @Override public double lmTimeS(int i) { return r.get(i).lmS(); }
        @Override public double vaeTimeS(int i) { return r.get(i).vaeS(); }
        @Override public int intervalSteps(int i) { return r.get(i).interval(); }
        @Override public double samples(int i) { return Double.NaN; }
        @Override public int rank(int i) { return -1; }
        @Override public int bucketHeight(int i) { return -1; }
        @Override public int bucketWidth(int i) { return -1; }
    }

    /** Each rank's own reports. */
    record Ranks(List<Integer> ids, List<StepSeries> series) implements RankSeries {
        @Override public int count() { return ids.size(); }
        @Override public int rank(int k) { return ids.get(k); }
        @Override public StepSeries steps(int k) { return series.get(k); }
    }

    /** One poll of a GPU. */
    record Poll(double ts, double util, double idle, double power, double sm, double tensor, double dram,
                double nvlink) {
        /** The same readings at {@code t}. */
        Poll at(double t) {
            return new Poll(t, util, idle, power, sm, tensor, dram, nvlink);
        }

        static Poll busy(double ts, double util, double power) {
            return new Poll(ts, util, Double.NaN, power, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }

        static Poll idle(double ts, double idleFraction) {
            return new Poll(ts, 1 - idleFraction, idleFraction, 200, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }

        static Poll counted(double ts, double util, double tensor, double dram, double nvlink) {
            return new Poll(ts, util, Double.NaN, 300, Double.NaN, tensor, dram, nvlink);
        }
    }

    record Gpu(String uuid, String host, List<Poll> p) implements QuietRun.FixtureGpu {
        @Override public int index() { return 0; }
        @Override public String name() { return "NVIDIA A100-SXM4-80GB"; }
        @Override public double memoryTotalBytes() { return 80.0 * (1L << 30); }
        @Override public boolean lost() { return false; }
        @Override public int size() { return p.size(); }
        @Override public double ts(int i) { return p.get(i).ts(); }
        @Override public double memoryUsedBytes(int i) { return 40.0 * (1L << 30); }
        @Override public int clockEventMask(int i) { return 0; }
        @Override public double reading(Reading r, int i) {
            Poll x = p.get(i);
            return switch (r) {
                case UTILIZATION, UTILIZATION_MIN -> x.util();
                case IDLE_FRACTION -> x.idle();
                case SM_CLOCK_HZ -> 1.4e9;
                case SM_CLOCK_MAX_HZ -> 1.41e9;
                case POWER_WATTS -> x.power();
                case TEMPERATURE_C -> 60;
                case SM_ACTIVE -> x.sm();
                case TENSOR_ACTIVE -> x.tensor();
                case DRAM_ACTIVE -> x.dram();
                case NVLINK_BYTES_PER_S -> x.nvlink();
                case PCIE_RX_BYTES_PER_S -> Double.NaN;
            };
        }
    }

    /** A GPU polled every second over [from, to) with what {@code at} says of each second. */
    static Gpu gpu(String uuid, double from, double to, DoubleFunction<Poll> at) {
        return gpu(uuid, "node-0", from, to, at);
    }

    static Gpu gpu(String uuid, String host, double from, double to, DoubleFunction<Poll> at) {
        List<Poll> polls = new ArrayList<>();
        for (double t = from; t < to; t += 1) {
            polls.add(at.apply(t));
        }
        return new Gpu(uuid, host, polls);
    }

    /** {@code n} step reports of {@code seconds} each, one every {@code every} s, the newest at now. */
    record EvenSteps(int n, double seconds, double every, double now) implements QuietRun.FixtureSteps {
        EvenSteps(int n, double seconds, double every) {
            this(n, seconds, every, Double.NaN);
        }
        @Override public int size() { return n; }
        @Override public double ts(int i) { return now - (n - 1 - i) * every; }
        @Override public long step(int i) { return 100 + i; }
        @Override public double timeS(int i) { return seconds; }
        @Override public double dataTimeS(int i) { return Double.NaN; }
        @Override public double lmTimeS(int i) { return Double.NaN; }
        @Override public double vaeTimeS(int i) { return Double.NaN; }
        @Override public int intervalSteps(int i) { return 1; }
        @Override public double samples(int i) { return 1; }
        @Override public int rank(int i) { return -1; }
        @Override public int bucketHeight(int i) { return -1; }
        @Override public int bucketWidth(int i) { return -1; }
    }

    /** A GPU polled every 5 s for five minutes up to now; each reading a function of the entry's index. */
    static final class IndexedGpu implements QuietRun.FixtureGpu {
        static final int ENTRIES = 60;
        final String name;
        final double total;
        final double now;
        IntToDoubleFunction memory = i -> Double.NaN;
        IntToDoubleFunction utilization = i -> 0.97;
        IntToDoubleFunction smActive = i -> Double.NaN;
        IntToDoubleFunction pcieRx = i -> Double.NaN;
        List<OtherProcess> others = List.of();

        IndexedGpu(String name, double totalBytes, double now) {
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
        @Override public int clockEventMask(int i) { return 0; }
        @Override public double reading(Reading r, int i) {
            return switch (r) {
                case UTILIZATION, UTILIZATION_MIN -> utilization.applyAsDouble(i);
                case IDLE_FRACTION -> 0;
                case SM_CLOCK_HZ, SM_CLOCK_MAX_HZ -> 2.52e9;
                case POWER_WATTS -> 300;
                case TEMPERATURE_C -> 60;
                case SM_ACTIVE -> smActive.applyAsDouble(i);
                case PCIE_RX_BYTES_PER_S -> pcieRx.applyAsDouble(i);
                case TENSOR_ACTIVE, DRAM_ACTIVE, NVLINK_BYTES_PER_S -> Double.NaN;
            };
        }
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

    @Override public String runId() { return "fixture"; }
    @Override public double now() { return now; }
    @Override public RunSpec spec() { return spec; }
    @Override public Estimate estimate() { return estimate; }
    @Override public StepSeries steps() { return steps; }
    @Override public RankSeries ranks() { return ranks; }
    @Override public List<GpuSeries> gpus() { return gpus; }
    @Override public List<XidRecord> xids() { return List.of(); }
    @Override public List<AgentStatus> agents() { return List.of(); }
    @Override public OptionalInt latentDownsample() { return OptionalInt.empty(); }
    @Override public List<RankProcess> rankProcesses() { return procs; }
    @Override public Map<Integer, String> gpuOfRank() { return gpuOfRank; }
    @Override public String announcedPhase() { return phase; }
    @Override public double announcedPhaseTs() { return phaseTs; }
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
}
