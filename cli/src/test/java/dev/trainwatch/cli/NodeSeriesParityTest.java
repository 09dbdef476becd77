package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.agent.export.NodeExporter;
import dev.trainwatch.agent.export.NodeReadings;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The two layouts serve the same node series: what a node's agent serves on its own /metrics (--listen) is, sample
 * for sample, what the collector serves for that node with --gpu-series on. Dashboards and alert rules therefore
 * read either.
 */
@Timeout(60)
class NodeSeriesParityTest {

    static final String BATCH = """
            {"host":"node1","agent_id":"agent-1","seq":1,
             "gpus":[
              {"ts":1000,"index":0,"uuid":"GPU-aaaa","name":"NVIDIA H100 80GB HBM3","memory_total_bytes":85899345920,
               "memory_used_bytes":60000000000,"utilization_ratio":0.97,"utilization_window":{"count":10,"min_ratio":0.4,"mean_ratio":0.9,"max_ratio":1.0,
               "idle_fraction":0.1,"from_ts":999,"to_ts":1000},"sm_clock_hz":1980000000,"sm_clock_max_hz":1980000000,
               "clock_event_reasons":["hw_slowdown"],"power_watts":690.5,"power_limit_watts":700,
               "energy_joules":123456789,"temperature_celsius":71,"processes":[{"pid":42,"used_memory_bytes":1}],
               "activity":{"window_seconds":1,"sm_active_ratio":0.8,"sm_occupancy_ratio":0.5,"tensor_active_ratio":0.6,
               "dram_active_ratio":0.3,"pcie_rx_bytes_per_second":1000000,"pcie_tx_bytes_per_second":2000000,
               "nvlink_rx_bytes":5000000,"nvlink_tx_bytes":6000000}},
              {"ts":1000,"index":1,"uuid":"GPU-bbbb","name":"NVIDIA H100 80GB HBM3","memory_total_bytes":85899345920,
               "memory_used_bytes":1000,"utilization_ratio":0.0,"sm_clock_hz":345000000,"sm_clock_max_hz":1980000000,
               "clock_event_reasons":["gpu_idle"],"power_watts":70,"temperature_celsius":30,"lost":false}],
             "runs":[{"run_id":"run-a","pids":[42],"gpu_uuids":["GPU-aaaa"]}],
             "events":[{"ts":1000,"kind":"xid","gpu_uuid":"GPU-aaaa","xid":79,"message":"fallen off the bus"}],
             "host_memory":{"ts":1000,"mem_total_bytes":2199023255552,"mem_available_bytes":1099511627776,
               "shm_total_bytes":1099511627776,"shm_used_bytes":1073741824}}
            """;

    /** The sample lines of the node series in a Prometheus text exposition. */
    static Set<String> nodeSamples(String exposition) {
        Set<String> out = new TreeSet<>();
        exposition.lines().filter(l -> l.startsWith("trainwatch_gpu_") || l.startsWith("trainwatch_host_"))
                .forEach(out::add);
        return out;
    }

    @Test
    void theAgentsExporterAndTheCollectorServeTheSameNodeSeries() throws Exception {
        AgentBatch batch = Json.MAPPER.readValue(BATCH, AgentBatch.class);

        NodeReadings readings = new NodeReadings("node1");
        readings.update(batch.gpus(), batch.runs(), batch.hostMemory(), batch.events());
        String agentSide;
        try (NodeExporter exporter = NodeExporter.start(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), readings, null)) {
            agentSide = new String(exporter.scrape(), StandardCharsets.UTF_8);
        }

        String collectorSide;
        try (CollectorServer collector = CollectorServer.builder(CollectorConfig.defaults()
                .withListen("127.0.0.1", 0).withGpuSeries(true)).jvmMetrics(false).start()) {
            collector.fleet().ingestBatch(batch);
            collectorSide = collector.metrics().scrape();
        }

        Set<String> fromAgent = nodeSamples(agentSide);
        assertThat(fromAgent).hasSizeGreaterThan(40)
                .contains("trainwatch_gpu_xid_errors_total{gpu=\"0\",gpu_uuid=\"GPU-aaaa\",host=\"node1\",kind=\"79\"} 1.0")
                .anyMatch(l -> l.startsWith("trainwatch_gpu_run_info{gpu=\"0\",gpu_uuid=\"GPU-aaaa\",host=\"node1\","
                        + "run_id=\"run-a\"}"))
                .anyMatch(l -> l.startsWith("trainwatch_host_shm_used_bytes{host=\"node1\"}"));
        assertThat(fromAgent).containsExactlyElementsOf(nodeSamples(collectorSide));
        assertThat(List.of(agentSide.split("\n"))).as("the agent serves the node series only")
                .noneMatch(l -> l.startsWith("trainwatch_run_") || l.startsWith("trainwatch_agent_"));
    }
}
