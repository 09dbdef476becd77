package dev.trainwatch.cli.watch;

import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import java.util.List;

/**
 * The GPU side of {@code trainwatch run} without NVML: no readings at all (nothing "idle" is ever reported), while the
 * log and process tree are still watched. Immutable.
 */
public final class NoGpus implements GpuReader {

    private final String reason;

    /** @param reason why NVML is unusable, one line */
    public NoGpus(String reason) {
        this.reason = reason;
    }

    public String reason() {
        return reason;
    }

    @Override
    public List<GpuSample> readAll() {
        return List.of();
    }

    @Override
    public List<AgentEvent> drainEvents() {
        return List.of();
    }

    @Override
    public long failedReads() {
        return 0;
    }

    @Override
    public String driverVersion() {
        return "unavailable";
    }

    @Override
    public void close() {
        // Nothing was acquired.
    }
}
