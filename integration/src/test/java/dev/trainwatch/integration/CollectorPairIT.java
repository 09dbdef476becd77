package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pair of collectors behind one real Alertmanager (docs/DEPLOY.md, "Running two collectors"): both get the same
 * batches, as an agent with two --collector does, both judge the run and both send its alert; Alertmanager holds one
 * alert (identical labels) and its webhook receiver gets one notification. With one collector gone, the other still
 * sends the alert.
 */
@Timeout(120)
class CollectorPairIT {
    private final List<Process> processes = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<JsonNode> notifications = new CopyOnWriteArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        processes.forEach(Process::destroyForcibly);
    }

    static AgentBatch batch(long seq, double ts) throws IOException {
        return Json.MAPPER.readValue("""
                {"host":"node1","agent_id":"agent-1","seq":%d,
                 "gpus":[{"ts":%s,"index":0,"uuid":"GPU-aaaa","name":"NVIDIA A100-SXM4-80GB",
                   "memory_total_bytes":85899345920,"memory_used_bytes":60000000000,"utilization_ratio":0.97}],
                 "runs":[{"run_id":"run-pair","pids":[42],"gpu_uuids":["GPU-aaaa"]}],
                 "events":[{"ts":%s,"kind":"xid","gpu_uuid":"GPU-aaaa","xid":79,"message":"fallen off the bus"}]}
                """.formatted(seq, ts, ts), AgentBatch.class);
    }

    @Test
    void bothJudgeTheRunAndAlertmanagerSendsOneNotification() throws Exception {
        int alertmanagerPort = PeerProcess.freePort();
        int hookPort = startWebhook();
        startAlertmanager(alertmanagerPort, hookPort);
        URI alertmanager = URI.create("http://127.0.0.1:" + alertmanagerPort);
        CollectorStack a = collector(alertmanager, "a");
        CollectorStack b = collector(alertmanager, "b");

        AgentBatch first = batch(1, System.currentTimeMillis() / 1000.0);
        a.fleet().ingestBatch(first);
        b.fleet().ingestBatch(first);
        for (CollectorStack c : List.of(a, b)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> c.fleet().run("run-pair").orElseThrow().anomalies()
                    .stream().anyMatch(x -> x.kind() == AnomalyKind.XID_ERROR && x.active()));
        }
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> a.alerts().outcomes().getOrDefault("ok", 0L) > 0
                        && b.alerts().outcomes().getOrDefault("ok", 0L) > 0
                        && !notifications.isEmpty());
        assertThat(alerts(alertmanagerPort)).as("one alert in Alertmanager for the run").hasSize(1);
        assertThat(notifications).as("one notification").hasSize(1);
        assertThat(notifications.get(0).path("alerts")).hasSize(1);

        b.close(); // one of the pair dies: the other's alert is still there
        closeables.remove(b);
        a.fleet().ingestBatch(batch(2, System.currentTimeMillis() / 1000.0));
        assertThat(alerts(alertmanagerPort)).singleElement()
                .satisfies(x -> assertThat(x.at("/status/state").asText()).isEqualTo("active"));
    }

    private CollectorStack collector(URI alertmanager, String name) throws IOException {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0)
                .withDataDir(Files.createDirectories(dir.resolve(name))).withAlerting(alertmanager, null);
        CollectorStack stack = CollectorStack.start(config, line -> { });
        closeables.add(stack);
        return stack;
    }

    private int startWebhook() throws IOException {
        HttpServer hook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        hook.createContext("/hook", exchange -> {
            notifications.add(Json.MAPPER.readTree(exchange.getRequestBody().readAllBytes()));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        hook.start();
        closeables.add(() -> hook.stop(0));
        return hook.getAddress().getPort();
    }

    private void startAlertmanager(int port, int hookPort) throws IOException {
        Path config = Files.writeString(dir.resolve("alertmanager.yml"), """
                route:
                  receiver: hook
                  group_by: [alertname, run_id]
                  group_wait: 2s
                  group_interval: 5m
                  repeat_interval: 4h
                receivers:
                  - name: hook
                    webhook_configs:
                      - url: http://127.0.0.1:%d/hook
                        send_resolved: false
                """.formatted(hookPort));
        processes.add(new ProcessBuilder(
                ExternalCommand.require("prometheus-alertmanager", "prometheus-alertmanager").toString(),
                "--config.file=" + config, "--storage.path=" + dir.resolve("am-data"),
                "--web.listen-address=127.0.0.1:" + port, "--cluster.listen-address=")
                .redirectErrorStream(true).redirectOutput(dir.resolve("alertmanager.log").toFile()).start());
    }

    private List<JsonNode> alerts(int port) throws IOException, InterruptedException {
        HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/api/v2/alerts?filter=run_id%3D%22run-pair%22"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofByteArray());
        List<JsonNode> out = new ArrayList<>();
        Json.MAPPER.readTree(response.body()).forEach(out::add);
        return out;
    }
}
