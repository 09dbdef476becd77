package dev.trainwatch.agent.testing;

import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A GpuReader of {@code gpus} GPUs whose every poll is numbered: poll n yields samples with {@code ts = n}, so a
 * test can tell exactly which polls reached the collector. Unless made {@link #withoutXids}, every tenth poll
 * (n % 10 == 5) reports an XID on GPU 0. A test may change the processes on GPU 0 ({@link #pids}) and hand it events
 * for the next poll ({@link #queueEvents}) while it runs. Thread-safe enough for one polling thread plus readers.
 */
public final class FakeGpuReader implements GpuReader {

    private final int gpus;
    private final boolean periodicXids;
    private volatile long[] pids;
    private volatile List<AgentEvent> queued = List.of();
    private final AtomicLong polls = new AtomicLong();
    private volatile boolean closed;

    public FakeGpuReader(int gpus, long... pidsOnGpu0) {
        this(gpus, true, pidsOnGpu0);
    }

    private FakeGpuReader(int gpus, boolean periodicXids, long... pidsOnGpu0) {
        this.gpus = gpus;
        this.periodicXids = periodicXids;
        this.pids = pidsOnGpu0;
    }

    /** A reader whose only events are the ones a test queues. */
    public static FakeGpuReader withoutXids(int gpus) {
        return new FakeGpuReader(gpus, false);
    }

    private volatile java.util.Map<Integer, List<String>> reasons = java.util.Map.of();

    /** The clock-event reasons each GPU reports from the next poll on (by index; others report none). */
    public void reasons(java.util.Map<Integer, List<String>> byGpu) {
        this.reasons = java.util.Map.copyOf(byGpu);
    }

    private volatile java.util.Map<Integer, Double> utilization = java.util.Map.of();

    /** The utilisation each GPU reports from the next poll on (by index; others 97 %). */
    public void utilization(java.util.Map<Integer, Double> byGpu) {
        this.utilization = java.util.Map.copyOf(byGpu);
    }

    /** The processes GPU 0 lists from the next poll on. */
    public void pids(long... pidsOnGpu0) {
        this.pids = pidsOnGpu0.clone();
    }

    /** Events the next drain returns (before any periodic XID). */
    public synchronized void queueEvents(List<AgentEvent> events) {
        List<AgentEvent> all = new ArrayList<>(queued);
        all.addAll(events);
        queued = List.copyOf(all);
    }

    @Override
    public List<GpuSample> readAll() {
        long n = polls.incrementAndGet();
        List<GpuSample> samples = new ArrayList<>(gpus);
        long[] onGpu0 = pids;
        java.util.Map<Integer, List<String>> byGpu = reasons;
        java.util.Map<Integer, Double> utilByGpu = utilization;
        for (int i = 0; i < gpus; i++) {
            GpuSample s = i == 0 ? Samples.gpu(n, i, onGpu0) : Samples.gpu(n, i);
            List<String> r = byGpu.get(i);
            Double u = utilByGpu.get(i);
            samples.add(r == null && u == null ? s : new GpuSample(s.ts(), s.index(), s.uuid(), s.name(),
                    s.pciBusId(), s.memoryTotalBytes(), s.memoryUsedBytes(), s.memoryReservedBytes(),
                    s.memoryFreeBytes(), u != null ? u : s.utilizationRatio(), s.memoryUtilizationRatio(), s.utilizationWindow(), s.smClockHz(),
                    s.smClockMaxHz(), s.memClockHz(), s.memClockMaxHz(), r != null ? r : s.clockEventReasons(), s.powerWatts(), s.powerLimitWatts(),
                    s.energyJoules(), s.temperatureCelsius(), s.pstate(), s.processes(), s.lost(), s.activity()));
        }
        return samples;
    }

    /** How many polls were taken. */
    public long polls() {
        return polls.get();
    }

    @Override
    public synchronized List<AgentEvent> drainEvents() {
        long n = polls.get();
        List<AgentEvent> out = queued;
        queued = List.of();
        if (periodicXids && n % 10 == 5) {
            out = new ArrayList<>(out);
            out.add(AgentEvent.xid(n, Samples.uuid(0), 79));
        }
        return out;
    }

    @Override
    public long failedReads() {
        return 0;
    }

    @Override
    public String driverVersion() {
        return "555.42.06";
    }

    @Override
    public void close() {
        closed = true;
    }

    public boolean closed() {
        return closed;
    }
}
