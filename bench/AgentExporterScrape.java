import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.agent.export.NodeExporter;
import dev.trainwatch.agent.export.NodeReadings;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one node's exporter ({@code trainwatch agent --listen}) costs Prometheus and the agent: a node of GPUS GPUs
 * (default 8) with the agent's reading set, a run on them and a throttled GPU, served by the agent's own
 * {@code NodeExporter} on loopback and scraped SCRAPES times (default 2,000) over HTTP as Prometheus does. Prints the
 * series and bytes of one scrape and the mean wall time and the exporter process's CPU per scrape.
 *
 * <pre>java -cp cli/target/trainwatch-all.jar bench/AgentExporterScrape.java [GPUS] [SCRAPES]</pre>
 */
public class AgentExporterScrape {
    public static void main(String[] args) throws Exception {
        int gpus = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int scrapes = args.length > 1 ? Integer.parseInt(args[1]) : 2_000;
        List<Object> readings = new ArrayList<>();
        List<String> uuids = new ArrayList<>();
        for (int g = 0; g < gpus; g++) {
            String uuid = String.format(Locale.ROOT, "GPU-%08x-0000-4000-8000-000000000000", g);
            uuids.add(uuid);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("ts", 1000.0);
            r.put("index", g);
            r.put("uuid", uuid);
            r.put("name", "NVIDIA H100 80GB HBM3");
            r.put("memory_total_bytes", 85_899_345_920L);
            r.put("memory_used_bytes", 60_000_000_000L);
            r.put("utilization_ratio", 0.97);
            r.put("sm_clock_hz", g == 0 ? 990_000_000L : 1_980_000_000L);
            r.put("sm_clock_max_hz", 1_980_000_000L);
            r.put("clock_event_reasons", g == 0 ? List.of("hw_slowdown") : List.of());
            r.put("power_watts", 690.5);
            r.put("power_limit_watts", 700.0);
            r.put("energy_joules", 1.0e7);
            r.put("temperature_celsius", 61.0);
            r.put("activity", Map.of("window_seconds", 1.0, "sm_active_ratio", 0.8, "sm_occupancy_ratio", 0.5,
                    "tensor_active_ratio", 0.6, "dram_active_ratio", 0.3, "pcie_rx_bytes_per_second", 1.0e6,
                    "pcie_tx_bytes_per_second", 2.0e6, "nvlink_rx_bytes", 5_000_000L, "nvlink_tx_bytes", 6_000_000L));
            readings.add(r);
        }
        Map<String, Object> body = Map.of("host", "node-1", "agent_id", "a", "seq", 1, "gpus", readings,
                "runs", List.of(Map.of("run_id", "run-a", "pids", List.of(42), "gpu_uuids", uuids)),
                "host_memory", Map.of("ts", 1000.0, "mem_total_bytes", 2L << 40, "mem_available_bytes", 1L << 40,
                        "shm_total_bytes", 1L << 39, "shm_used_bytes", 1L << 30));
        AgentBatch batch = Json.MAPPER.readValue(new ObjectMapper().writeValueAsBytes(body), AgentBatch.class);
        NodeReadings node = new NodeReadings("node-1");
        node.update(batch.gpus(), batch.runs(), batch.hostMemory(), List.of());
        try (NodeExporter exporter = NodeExporter.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                node, null)) {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + exporter.port() + "/metrics"))
                    .build();
            String text = client.send(get, HttpResponse.BodyHandlers.ofString()).body();
            long series = text.lines().filter(l -> !l.isEmpty() && !l.startsWith("#")).count();
            for (int i = 0; i < scrapes / 4; i++) { // warm-up
                client.send(get, HttpResponse.BodyHandlers.discarding());
            }
            long cpu0 = ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos();
            long t0 = System.nanoTime();
            for (int i = 0; i < scrapes; i++) {
                client.send(get, HttpResponse.BodyHandlers.discarding());
            }
            long wall = System.nanoTime() - t0;
            long cpu = ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos() - cpu0;
            System.out.printf(Locale.ROOT, "node exporter, %d GPUs: %d series, %d bytes per scrape; %d scrapes: mean"
                    + " %.2f ms wall, %.2f ms CPU of this process (exporter and client together) per scrape%n",
                    gpus, series, text.length(), scrapes, wall / 1e6 / scrapes, cpu / 1e6 / scrapes);
        }
    }
}
