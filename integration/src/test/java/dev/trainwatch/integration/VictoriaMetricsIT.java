package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Beyond one Prometheus, the path docs/DEPLOY.md documents: each Prometheus scrapes its collectors and
 * remote-writes to VictoriaMetrics (Debian's {@code victoria-metrics}); {@code vmalert} evaluates the shipped rule
 * files — recording and alerting — against VictoriaMetrics, writes the recorded series back and sends alerts to
 * Alertmanager. The three-node run of {@link ManyNodesIT} must give the same run-wide answers there.
 */
@Execution(ExecutionMode.CONCURRENT) // waits for scrapes and rule evaluations: runs beside the other tests
class VictoriaMetricsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Object> SPEC = Map.of("model", "pixart-sigma-xl-2", "gpu", "a100-80gb",
            "gpus", 24, "batch", 8, "resolution", 1024, "precision", "bf16", "optimizer", "came",
            "grad_checkpointing", true, "features", "precomputed", "total_steps", 100_000);
    private static final List<String> NODES = List.of("node-a", "node-b", "node-c");

    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    @Test
    void rulesEvaluatedByVmalertOverRemoteWrittenSeriesGiveTheRunWideAnswers() throws Exception {
        Path vmBin = ExternalCommand.require("victoria-metrics", "victoria-metrics");
        Path vmalertBin = ExternalCommand.require("vmalert", "victoria-metrics");
        Path prometheusBin = ExternalCommand.require("prometheus", "prometheus");
        Path alertmanagerBin = ExternalCommand.require("prometheus-alertmanager", "prometheus-alertmanager");
        List<CollectorServer> collectors = new ArrayList<>();
        List<ScenarioFeeder> feeders = new ArrayList<>();
        List<PeerProcess> peers = new ArrayList<>();
        try {
            for (int i = 0; i < NODES.size(); i++) {
                collectors.add(CollectorServer.start(CollectorConfig.defaults().withListen("127.0.0.1", 0), List.of()));
            }
            int vmPort = PeerProcess.freePort();
            int amPort = PeerProcess.freePort();
            int promPort = PeerProcess.freePort();
            int vmalertPort = PeerProcess.freePort();
            URI vm = URI.create("http://127.0.0.1:" + vmPort);
            URI vmalert = URI.create("http://127.0.0.1:" + vmalertPort);
            peers.add(PeerProcess.start("victoria-metrics", dir, List.of(vmBin.toString(),
                    "-storageDataPath=" + Files.createDirectories(dir.resolve("vm-data")),
                    "-httpListenAddr=127.0.0.1:" + vmPort, "-retentionPeriod=1d", "-search.latencyOffset=0s",
                    "-dedup.minScrapeInterval=0")));
            Path amConfig = dir.resolve("alertmanager.yml");
            Files.writeString(amConfig, "route:\n  receiver: test\nreceivers:\n  - name: test\n");
            peers.add(PeerProcess.start("alertmanager", dir, List.of(alertmanagerBin.toString(),
                    "--config.file=" + amConfig, "--storage.path=" + Files.createDirectories(dir.resolve("am-data")),
                    "--web.listen-address=127.0.0.1:" + amPort, "--cluster.listen-address=")));
            // Prometheus only scrapes and remote-writes: no rule files, the rules run in vmalert.
            Path promConfig = dir.resolve("prometheus.yml");
            Files.writeString(promConfig, """
                    global:
                      scrape_interval: 1s
                    remote_write:
                      - url: %s/api/v1/write
                        queue_config: {batch_send_deadline: 1s}
                    scrape_configs:
                      - job_name: trainwatch
                        static_configs:
                          - targets: [%s]
                    """.formatted(vm, collectors.stream().map(c -> "\"127.0.0.1:" + c.port() + "\"")
                    .collect(Collectors.joining(", "))));
            peers.add(PeerProcess.start("prometheus", dir, List.of(prometheusBin.toString(),
                    "--config.file=" + promConfig, "--storage.tsdb.path=" + Files.createDirectories(dir.resolve("tsdb")),
                    "--web.listen-address=127.0.0.1:" + promPort)));
            Path rules = Files.createDirectories(dir.resolve("rules"));
            LoopbackStack.shortenedRules(rules);
            peers.add(PeerProcess.start("vmalert", dir, List.of(vmalertBin.toString(),
                    "-rule=" + rules + "/*.rules.yml", "-datasource.url=" + vm, "-remoteWrite.url=" + vm,
                    "-remoteRead.url=" + vm, "-notifier.url=http://127.0.0.1:" + amPort,
                    "-evaluationInterval=1s", "-httpListenAddr=127.0.0.1:" + vmalertPort)));

            for (int i = 0; i < NODES.size(); i++) {
                ScenarioFeeder feeder = new ScenarioFeeder(collectors.get(i).uri());
                feeders.add(feeder);
                JsonNode estimate = feeder.putSpec("multi-vm", SPEC).path("estimate");
                boolean slow = NODES.get(i).equals("node-c");
                feeder.play(new ScenarioFeeder.Run("multi-vm", NODES.get(i), 8, 0.6, slow ? 0.99 : 0.8, 0.02,
                        slow ? List.of("hw_thermal_slowdown") : List.of(), 0, 0, true), estimate, 8 * 24);
            }

            String run = "{run_id=\"multi-vm\"}";
            try {
                await("recorded series and alerts in VictoriaMetrics and vmalert").atMost(Duration.ofSeconds(150))
                        .pollInterval(Duration.ofSeconds(2)).ignoreExceptions().untilAsserted(() -> {
                            for (PeerProcess p : peers) {
                                assertThat(p.alive()).as(p.logTail()).isTrue();
                            }
                            assertThat(value(vm, "run_id:trainwatch_gpus:count" + run)).isEqualTo(24);
                            assertThat(value(vm, "run_id_host:trainwatch_gpu_sm_clock:avg_ratio{run_id=\"multi-vm\","
                                    + "host=\"node-c\"}")).isCloseTo(0.7, within(0.01));
                            assertThat(firing(vmalert, "TrainwatchRunSlowNode")).containsExactly("node-c");
                        });
            } catch (org.awaitility.core.ConditionTimeoutException e) {
                StringBuilder logs = new StringBuilder();
                peers.forEach(p -> logs.append(p.logTail()).append('\n'));
                throw new AssertionError(e.getMessage() + "\n" + logs, e);
            }
            double step = value(vm, "max(trainwatch_run_predicted_step_seconds" + run + ")");
            assertThat(value(vm, "run_id:trainwatch_run_samples_per_second:max" + run))
                    .isCloseTo(8 * 24 / step, within(8 * 24 / step * 0.05));
            assertThat(feeders.stream().flatMap(f -> f.errors().stream()).toList()).isEmpty();
        } finally {
            feeders.forEach(ScenarioFeeder::close);
            collectors.forEach(CollectorServer::close);
            peers.forEach(PeerProcess::close);
        }
    }

    private double value(URI vm, String expr) throws IOException, InterruptedException {
        JsonNode answer = get(vm.resolve("/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8)));
        JsonNode result = answer.path("data").path("result");
        assertThat(result).as(expr + " -> " + answer).hasSize(1);
        return result.get(0).path("value").get(1).asDouble();
    }

    /** Hosts of the firing alerts of this name in vmalert. */
    private List<String> firing(URI vmalert, String name) throws IOException, InterruptedException {
        List<String> hosts = new ArrayList<>();
        for (JsonNode alert : get(vmalert.resolve("/api/v1/alerts")).path("data").path("alerts")) {
            if (alert.path("name").asText(alert.path("labels").path("alertname").asText()).equals(name)
                    && alert.path("state").asText().equals("firing")) {
                hosts.add(alert.path("labels").path("host").asText());
            }
        }
        return hosts;
    }

    private JsonNode get(URI uri) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }
}
