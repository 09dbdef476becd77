package dev.trainwatch.cli.watch;

import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.protocol.GpuSample;
import java.util.List;

/**
 * The GPU side of {@code trainwatch run} where NVML cannot be used: no readings at all (never "idle" or "0 bytes"),
 * while the log and the process tree are still watched.
 */
public final class NoGpus implements GpuReader {

    @Override
    public List<GpuSample> readAll() {
        return List.of();
    }

    @Override
    public String driverVersion() {
        return "unavailable";
    }
}
