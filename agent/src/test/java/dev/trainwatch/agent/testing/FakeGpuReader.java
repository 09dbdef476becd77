package dev.trainwatch.agent.testing;

import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A GpuReader of {@code gpus} GPUs whose every poll is numbered: poll n yields samples with {@code ts = n}, so a
 * test can tell exactly which polls reached the collector. Thread-safe enough for one polling thread plus readers.
 */
public final class FakeGpuReader implements GpuReader {

    private final int gpus;
    private final long[] pids;
    private final AtomicLong polls = new AtomicLong();
    private volatile boolean closed;

    public FakeGpuReader(int gpus, long... pidsOnGpu0) {
        this.gpus = gpus;
        this.pids = pidsOnGpu0;
    }

    @Override
    public List<GpuSample> readAll() {
        long n = polls.incrementAndGet();
        List<GpuSample> samples = new ArrayList<>(gpus);
        for (int i = 0; i < gpus; i++) {
            samples.add(i == 0 ? Samples.gpu(n, i, pids) : Samples.gpu(n, i));
        }
        return samples;
    }

    /** How many polls were taken. */
    public long polls() {
        return polls.get();
    }

    @Override
    public List<AgentEvent> drainEvents() {
        long n = polls.get();
        return n % 10 == 5 ? List.of(AgentEvent.xid(n, Samples.uuid(0), 79)) : List.of();
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
