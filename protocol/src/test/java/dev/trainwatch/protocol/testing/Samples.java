package dev.trainwatch.protocol.testing;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.ArrayList;
import java.util.List;

/** Wire records for tests of every module: GPU samples, run attributions, agent batches. */
public final class Samples {
    /** An A100-SXM4-80GB's memory, bytes. */
    public static final long A100_80GB = 80L << 30;

    private Samples() {
    }

    /** GPU {@code index}'s UUID in the samples below. */
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
                A100_80GB, 60_000_000_000L + index, null, 25_899_345_920L, utilization, 0.4, null,
                1_410_000_000L, 1_410_000_000L, 1_593_000_000L, 1_593_000_000L, List.of(), 390.5, 400.0,
                1.0e7 + ts, 61.0, 0, processes, null, null);
    }

    public static GpuSample gpu(double ts, int index, String uuid, long usedBytes, double util) {
        return gpu(ts, index, uuid, usedBytes, util, 1_410_000_000L, List.of());
    }

    public static GpuSample gpu(double ts, int index, String uuid, long usedBytes, double util, long smClockHz,
                                List<String> reasons) {
        UtilizationWindow w = new UtilizationWindow(6, util, util, util, util <= 0.05 ? 1 : 0, ts - 1, ts);
        return new GpuSample(ts, index, uuid, "NVIDIA A100-SXM4-80GB", null, A100_80GB, usedBytes,
                null, A100_80GB - usedBytes, util, null, w, smClockHz, 1_410_000_000L, null, null,
                reasons, 300.0, 400.0, null, 60.0, 0, List.of(), false, null);
    }

    public static GpuSample gpuWithWindow(double ts, int index, String uuid, long usedBytes, double util,
                                          double minUtil, double idleFraction) {
        UtilizationWindow w = new UtilizationWindow(6, minUtil, util, Math.min(1, util * 1.2), idleFraction,
                ts - 1, ts);
        return new GpuSample(ts, index, uuid, "NVIDIA A100-SXM4-80GB", null, A100_80GB, usedBytes,
                null, A100_80GB - usedBytes, util, null, w, 1_410_000_000L, 1_410_000_000L, null,
                null, List.of(), 300.0, 400.0, null, 60.0, 0, List.of(), false, null);
    }

    public static RunAttribution attribution(String runId, List<String> uuids) {
        return new RunAttribution(runId, List.of(1234L), uuids, List.of(), null, false, null, null, null, null, null);
    }

    public static RunAttribution ended(String runId, List<String> uuids) {
        return new RunAttribution(runId, List.of(1234L), uuids, List.of(), null, true, null, null, null, null, null);
    }

    public static AgentBatch batch(String host, String agentId, long seq, List<GpuSample> gpus,
                                   List<RunAttribution> runs, List<AgentEvent> events) {
        return new AgentBatch(host, agentId, seq, gpus, runs, events,
                new AgentHealth(0.002, 0L, 0L, 0L, 0L, 1.0), null, null, null);
    }

    /** {@code e} as read from the log stretch {@code source} ({@code null}: pushed by a script). */
    public static StepEvent withSource(StepEvent e, String source) {
        return new StepEvent(e.step(), e.timeS(), e.dataTimeS(), e.modelTimeS(), e.lmTimeS(), e.vaeTimeS(),
                e.intervalSteps(), e.samples(), e.loss(), e.lr(), e.gradNorm(), e.bucketHeight(), e.bucketWidth(),
                e.rank(), e.ts(), source);
    }
}
