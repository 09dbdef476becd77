package dev.trainwatch.agent.testing;

import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import java.util.ArrayList;
import java.util.List;

/** GpuSamples for tests. */
public final class Samples {

    private Samples() {
    }

    public static String uuid(int index) {
        return String.format("GPU-%08d-1111-2222-3333-444455556666", index);
    }

    /** A sample of GPU {@code index} with the given compute processes (null = the process read failed). */
    public static GpuSample gpu(double ts, int index, long... pids) {
        List<GpuProcess> processes = new ArrayList<>();
        for (long pid : pids) {
            processes.add(new GpuProcess(pid, 20L << 30, null, null));
        }
        return sample(ts, index, processes, 0.97);
    }

    /** A sample whose process list could not be read. */
    public static GpuSample gpuWithUnknownProcesses(double ts, int index) {
        return sample(ts, index, null, 0.5);
    }

    public static GpuSample sample(double ts, int index, List<GpuProcess> processes, double utilization) {
        return new GpuSample(ts, index, uuid(index), "NVIDIA A100-SXM4-80GB", String.format("00000000:%02X:00.0", index + 7),
                85_899_345_920L, 60_000_000_000L + index, null, 25_899_345_920L, utilization, 0.4, null,
                1_410_000_000L, 1_410_000_000L, 1_593_000_000L, 1_593_000_000L, List.of(), 390.5, 400.0,
                1.0e7 + ts, 61.0, 0, processes, null);
    }
}
