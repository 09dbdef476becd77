package dev.trainwatch.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Prometheus side of a 1,024-GPU fleet: 128 nodes of 8 GPUs, one run of 8 GPUs per node, fed through a real
 * collector and scraped by a real Prometheus with the shipped rules (1 s scrape and evaluation). Prints the series
 * per GPU and per run in one scrape, Prometheus' head series, and each rule group's evaluation time. Not a test:
 * docs/PERFORMANCE.md gives the command and the figures.
 */
public final class PrometheusFleetCost {
    private PrometheusFleetCost() {
    }

    public static void main(String[] args) throws Exception {
        int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 128;
        int warmSeconds = args.length > 1 ? Integer.parseInt(args[1]) : 90;
        Path dir = Files.createTempDirectory("trainwatch-fleet-cost");
        Map<String, Object> spec = Map.of("model", "pixart-sigma-xl-2", "gpu", "a100-80gb", "gpus", 8, "batch", 8,
                "resolution", 1024, "precision", "bf16", "optimizer", "came", "features", "precomputed",
                "total_steps", 100_000);
        List<ScenarioFeeder> feeders = new ArrayList<>();
        try (CollectorServer collector = CollectorServer.start(CollectorConfig.defaults().withListen("127.0.0.1", 0),
                List.of()); LoopbackStack stack = LoopbackStack.start(dir, "127.0.0.1:" + collector.port())) {
            for (int n = 0; n < nodes; n++) {
                ScenarioFeeder feeder = new ScenarioFeeder(collector.uri());
                feeders.add(feeder);
                String runId = "fleet-run-" + n;
                JsonNode estimate = feeder.putSpec(runId, spec).path("estimate");
                feeder.play(new ScenarioFeeder.Run(runId, "node-" + n, 8, 0.6, 0.9, 0.05,
                        n % 16 == 0 ? List.of("sw_power_cap") : List.of(), 0, 0, true), estimate, 64);
            }
            Thread.sleep(warmSeconds * 1000L);
            String scrape = collector.metrics().scrape();
            long all = scrape.lines().filter(l -> l.startsWith("trainwatch_")).count();
            long oneGpu = scrape.lines().filter(l -> l.startsWith("trainwatch_gpu_") && l.contains("gpu_uuid=\"GPU-node-0-0\"")).count();
            long oneRun = scrape.lines().filter(l -> l.startsWith("trainwatch_run_") && l.contains("run_id=\"fleet-run-0\"")).count();
            System.out.printf("collector: %d GPUs, %d runs; one scrape %,d bytes, %,d trainwatch series "
                    + "(%d per GPU, %d per run)%n", nodes * 8, nodes, scrape.length(), all, oneGpu, oneRun);
            ObjectMapper json = new ObjectMapper();
            HttpClient http = HttpClient.newHttpClient();
            URI prometheus = stack.prometheusUri();
            JsonNode tsdb = json.readTree(http.send(HttpRequest.newBuilder(prometheus.resolve("/api/v1/status/tsdb"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body());
            System.out.printf("prometheus: head series %,d%n", tsdb.path("data").path("headStats").path("numSeries").asLong());
            JsonNode rules = json.readTree(http.send(HttpRequest.newBuilder(prometheus.resolve("/api/v1/rules"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body());
            double total = 0;
            for (JsonNode group : rules.path("data").path("groups")) {
                double seconds = group.path("evaluationTime").asDouble();
                total += seconds;
                System.out.printf("  rule group %-22s %3d rules, last evaluation %6.1f ms%n", group.path("name").asText(),
                        group.path("rules").size(), seconds * 1000);
            }
            System.out.printf("  all groups: %.1f ms per evaluation%n", total * 1000);
        } finally {
            feeders.forEach(ScenarioFeeder::close);
        }
    }
}
