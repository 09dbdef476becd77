package dev.trainwatch.agent.export;

import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.exposition.HostSeries;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.EventKind;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.RunAttribution;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The node's newest readings as its exporter serves them: each GPU's latest sample, its run and its XID errors since
 * start, and the node's memory. The poll thread updates; scrapes read an immutable snapshot. Thread-safe.
 */
public final class NodeReadings {

    record NodeGpu(String uuid, String host, String runId, GpuSample latest, Map<String, Long> xidCounts)
            implements GpuSeries.Gpu {
    }

    record NodeHost(String host, Long memAvailableBytes, Long memTotalBytes, Long shmUsedBytes, Long shmTotalBytes)
            implements HostSeries.Host {
    }

    private record Snapshot(List<NodeGpu> gpus, List<NodeHost> hosts) {
    }

    private final String host;
    /** By GPU, then by XID number; poll thread only. */
    private final Map<String, TreeMap<Long, Long>> xids = new HashMap<>();
    private volatile Snapshot snapshot = new Snapshot(List.of(), List.of());
    /** Set once an exporter serves these readings: an agent without --listen keeps no second copy of its poll. */
    private volatile boolean served;

    public NodeReadings(String host) {
        this.host = host;
    }

    public void serve() {
        served = true;
    }

    public boolean served() {
        return served;
    }

    /** The newest poll: the last sample of each GPU counts; null {@code memory} keeps the last. */
    public synchronized void update(List<GpuSample> samples, List<RunAttribution> runs, HostMemory memory,
                                    List<AgentEvent> events) {
        for (AgentEvent e : events) {
            if (e != null && e.kind() != null && e.eventKind() == EventKind.XID && e.gpuUuid() != null
                    && e.xid() != null) {
                xids.computeIfAbsent(e.gpuUuid(), u -> new TreeMap<>()).merge(e.xid(), 1L, Long::sum);
            }
        }
        Map<String, String> runOf = new HashMap<>();
        for (RunAttribution run : runs) {
            if (run.gpuUuids() != null && run.runId() != null) {
                run.gpuUuids().forEach(uuid -> runOf.put(uuid, run.runId()));
            }
        }
        Map<String, GpuSample> latest = new LinkedHashMap<>();
        for (GpuSample s : samples) {
            if (s != null && s.uuid() != null) {
                latest.put(s.uuid(), s);
            }
        }
        List<NodeGpu> gpus = latest.values().stream()
                .map(s -> new NodeGpu(s.uuid(), host, runOf.get(s.uuid()), s, xidCounts(s.uuid()))).toList();
        List<NodeHost> hosts = snapshot.hosts();
        if (memory != null) {
            hosts = List.of(new NodeHost(host, memory.memAvailableBytes(), memory.memTotalBytes(),
                    memory.shmUsedBytes(), memory.shmTotalBytes()));
        }
        snapshot = new Snapshot(gpus, hosts);
    }

    private Map<String, Long> xidCounts(String uuid) {
        TreeMap<Long, Long> counts = xids.get(uuid);
        if (counts == null) {
            return null;
        }
        Map<String, Long> out = new LinkedHashMap<>();
        counts.forEach((xid, n) -> out.put(Long.toString(xid), n));
        return out;
    }

    public List<? extends GpuSeries.Gpu> gpus() {
        return snapshot.gpus();
    }

    public List<? extends HostSeries.Host> hosts() {
        return snapshot.hosts();
    }
}
