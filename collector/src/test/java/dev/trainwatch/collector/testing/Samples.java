package dev.trainwatch.collector.testing;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.List;

/** Builders for wire records in tests. */
public final class Samples {

    private Samples() {
    }

    public static GpuSample gpu(double ts, int index, String uuid, long usedBytes, double util) {
        return gpu(ts, index, uuid, usedBytes, util, 1_410_000_000L, List.of());
    }

    public static GpuSample gpu(double ts, int index, String uuid, long usedBytes, double util, long smClockHz,
                                List<String> reasons) {
        UtilizationWindow w = new UtilizationWindow(6, util, util, util, util <= 0.05 ? 1 : 0, ts - 1, ts);
        return new GpuSample(ts, index, uuid, "NVIDIA A100-SXM4-80GB", null, FakePredictor.A100_80GB, usedBytes,
                null, FakePredictor.A100_80GB - usedBytes, util, null, w, smClockHz, 1_410_000_000L, null, null,
                reasons, 300.0, 400.0, null, 60.0, 0, List.of(), false);
    }

    public static GpuSample gpuWithWindow(double ts, int index, String uuid, long usedBytes, double util,
                                          double minUtil, double idleFraction) {
        UtilizationWindow w = new UtilizationWindow(6, minUtil, util, Math.min(1, util * 1.2), idleFraction,
                ts - 1, ts);
        return new GpuSample(ts, index, uuid, "NVIDIA A100-SXM4-80GB", null, FakePredictor.A100_80GB, usedBytes,
                null, FakePredictor.A100_80GB - usedBytes, util, null, w, 1_410_000_000L, 1_410_000_000L, null,
                null, List.of(), 300.0, 400.0, null, 60.0, 0, List.of(), false);
    }

    public static RunAttribution attribution(String runId, List<String> uuids) {
        return new RunAttribution(runId, List.of(1234L), uuids, List.of(), null, false);
    }

    public static RunAttribution ended(String runId, List<String> uuids) {
        return new RunAttribution(runId, List.of(1234L), uuids, List.of(), null, true);
    }

    public static AgentBatch batch(String host, String agentId, long seq, List<GpuSample> gpus,
                                   List<RunAttribution> runs, List<AgentEvent> events) {
        return new AgentBatch(host, agentId, seq, gpus, runs, events,
                new AgentHealth(0.002, 0L, 0L, 0L, 0L, 1.0));
    }
}
