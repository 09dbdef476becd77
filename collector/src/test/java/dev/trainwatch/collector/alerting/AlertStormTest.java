package dev.trainwatch.collector.alerting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunFailure;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Alerts that do not storm: a restart does not re-send what webhooks were already told (Alertmanager, which needs
 * re-sends, gets the alert again with its run link), and run ids that were never seen training notify nobody.
 */
class AlertStormTest {
    @TempDir
    Path dataDir;

    private HttpServer receivers;
    private final List<JsonNode> webhook = Collections.synchronizedList(new ArrayList<>());
    private final List<JsonNode> alertmanager = Collections.synchronizedList(new ArrayList<>());
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void receivers() throws Exception {
        receivers = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receivers.createContext("/hook", exchange -> {
            webhook.add(Json.MAPPER.readTree(exchange.getRequestBody().readAllBytes()));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receivers.createContext("/api/v2/alerts", exchange -> {
            for (JsonNode alert : Json.MAPPER.readTree(exchange.getRequestBody().readAllBytes())) {
                alertmanager.add(alert);
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receivers.start();
    }

    @AfterEach
    void stop() {
        receivers.stop(0);
    }

    private CollectorConfig config() {
        URI base = URI.create("http://127.0.0.1:" + receivers.getAddress().getPort());
        return CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir)
                .withAlerting(base, base.resolve("/hook"));
    }

    private void post(CollectorStack stack, AgentBatch batch) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(stack.server().uri().resolve("/v1/samples"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.MAPPER.writeValueAsBytes(batch))).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    private static AgentEvent failed(String runId) {
        return new AgentEvent(System.currentTimeMillis() / 1000.0, "run_failed", null, null, runId, null,
                new RunFailure("exception", "ValueError: bad batch", 1, null, 0,
                        Map.of("type", "ValueError", "message", "bad batch"), List.of("ValueError: bad batch")), null, null, null);
    }

    private long webhookFirings(String runId) {
        return List.copyOf(webhook).stream().flatMap(body -> {
            List<JsonNode> alerts = new ArrayList<>();
            body.path("alerts").forEach(alerts::add);
            if (alerts.isEmpty()) {
                alerts.add(body);
            }
            return alerts.stream();
        }).filter(a -> a.toString().contains(runId) && !a.toString().contains("\"resolved\"")).count();
    }

    @Test
    void aRestartDoesNotResendToWebhooksAndAlertmanagerGetsTheRunLink() throws Exception {
        double ts = System.currentTimeMillis() / 1000.0;
        try (CollectorStack stack = CollectorStack.start(config(), line -> { })) {
            post(stack, Samples.batch("node-a", "agent-a", 1, List.of(Samples.gpu(ts, 0, "GPU-a", 10L << 30, 0.9)),
                    List.of(Samples.attribution("real-run", List.of("GPU-a"))), List.of(failed("real-run"))));
            await().atMost(Duration.ofSeconds(60)).until(() -> webhookFirings("real-run") == 1
                    && alertmanager.stream().anyMatch(a -> a.toString().contains("real-run")));
        }
        webhook.clear();
        alertmanager.clear();
        for (int restart = 0; restart < 3; restart++) {
            int before = alertmanager.size();
            try (CollectorStack stack = CollectorStack.start(config(), line -> { })) {
                assertThat(stack.restoredRuns()).isEqualTo(1 + restart); // the real run and the markers so far
                // Alertmanager needs the active alert again (it would lapse), with the run's page as its link.
                await().atMost(Duration.ofSeconds(60)).until(() -> List.copyOf(alertmanager).subList(before,
                        alertmanager.size()).stream().anyMatch(a -> a.path("labels").path("run_id").asText()
                        .equals("real-run")));
                JsonNode resent = List.copyOf(alertmanager).subList(before, alertmanager.size()).stream()
                        .filter(a -> a.path("labels").path("run_id").asText().equals("real-run")).findFirst()
                        .orElseThrow();
                assertThat(resent.path("generatorURL").asText()).contains("#/runs/real-run");
                // What goes to a webhook after the re-send would have gone: a new run's failure, as a marker.
                post(stack, Samples.batch("node-b", "agent-b-" + restart, 1,
                        List.of(Samples.gpu(ts, 0, "GPU-b" + restart, 10L << 30, 0.9)),
                        List.of(Samples.attribution("marker-" + restart, List.of("GPU-b" + restart))),
                        List.of(failed("marker-" + restart))));
                int marker = restart;
                await().atMost(Duration.ofSeconds(60)).until(() -> webhookFirings("marker-" + marker) == 1);
            }
        }
        assertThat(webhookFirings("real-run")).as("webhook notices of the restored alert after 3 restarts")
                .isZero();
    }

    @Test
    void runIdsNeverSeenTrainingNotifyNobody() throws Exception {
        double ts = System.currentTimeMillis() / 1000.0;
        try (CollectorStack stack = CollectorStack.start(config(), line -> { })) {
            // Junk: run ids on GPUs that never sent a reading, no steps, no spec; their agent then goes quiet.
            // Each also claims an XID 79 (fallen off the bus) on its GPU: an anomaly at once.
            List<RunAttribution> junk = new ArrayList<>();
            List<AgentEvent> xids = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                junk.add(Samples.attribution("junk-" + i, List.of("GPU-never-" + i)));
                xids.add(AgentEvent.xid(ts, "GPU-never-" + i, 79));
            }
            post(stack, Samples.batch("junk-node", "junk-agent", 1, List.of(), junk, xids));
            // A real run's failure afterwards: once it is delivered, anything for the junk would have been too.
            post(stack, Samples.batch("node-a", "agent-a", 1, List.of(Samples.gpu(ts, 0, "GPU-a", 10L << 30, 0.9)),
                    List.of(Samples.attribution("real-run", List.of("GPU-a"))), List.of(failed("real-run"))));
            stack.server().fleet().tick();
            await().atMost(Duration.ofSeconds(60)).until(() -> webhookFirings("real-run") == 1);
            assertThat(stack.server().fleet().run("junk-0").orElseThrow().anomalies())
                    .as("the junk run's anomaly is there to see").anyMatch(a -> a.active());
            assertThat(List.copyOf(webhook).toString()).doesNotContain("junk-");
            assertThat(List.copyOf(alertmanager).toString()).doesNotContain("junk-");
        }
    }
}
