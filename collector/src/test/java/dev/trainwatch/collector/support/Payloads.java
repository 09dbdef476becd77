package dev.trainwatch.collector.support;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.ArrayList;
import java.util.List;

/** Realistic agent batches and samples for tests and benchmarks. */
public final class Payloads {
    public static final long A100_BYTES = 85_899_345_920L;

    private Payloads() {
    }

    /** A busy A100 sample with every reading present. */
    public static GpuSample sample(double ts, int index, String uuid, long usedBytes, double utilization,
                                   List<String> reasons) {
        return new GpuSample(ts, index, uuid, "NVIDIA A100-SXM4-80GB", String.format("00000000:%02X:00.0", index + 7),
                A100_BYTES, usedBytes, 512L << 20, A100_BYTES - usedBytes, utilization, 0.41,
                new UtilizationWindow(6, Math.max(0, utilization - 0.3), utilization, Math.min(1, utilization + 0.02),
                        0.0, ts - 1, ts),
                1_410_000_000L, 1_410_000_000L, 1_593_000_000L, 1_593_000_000L, reasons, 312.5, 400.0, 1.2e7,
                61.0, 0, List.of(new GpuProcess(4242 + index, usedBytes - (600L << 20), null, null)), null, null);
    }

    /** A batch of {@code gpus} GPUs of one host, all attributed to {@code runId}. */
    public static AgentBatch batch(String host, long seq, double ts, int gpus, String runId) {
        List<GpuSample> samples = new ArrayList<>(gpus);
        List<String> uuids = new ArrayList<>(gpus);
        List<Long> pids = new ArrayList<>(gpus);
        for (int i = 0; i < gpus; i++) {
            String uuid = uuid(host, i);
            uuids.add(uuid);
            pids.add(4242L + i);
            samples.add(sample(ts, i % 1024, uuid, 40_000_000_000L + i * 1_000_000L, 0.9 + (i % 10) / 100.0,
                    List.of()));
        }
        List<RunAttribution> runs = runId == null ? List.of()
                : List.of(new RunAttribution(runId, pids, uuids, null, null, null, null, null, null, null, null));
        return new AgentBatch(host, host + "-agent", seq, samples, runs, List.of(),
                new AgentHealth(0.012, 0L, 0L, 0L, 0L, 1.0), null, null, null);
    }

    /** A stable GPU UUID for a host and index. */
    public static String uuid(String host, int index) {
        return String.format("GPU-%08x-0000-4000-8000-%012d", Math.abs(host.hashCode()), index);
    }

    /** Serialised with the wire codec. */
    public static byte[] json(Object value) {
        try {
            return Json.MAPPER.writeValueAsBytes(value);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static AgentEvent xid(double ts, String uuid, long xid) {
        return AgentEvent.xid(ts, uuid, xid);
    }
}
