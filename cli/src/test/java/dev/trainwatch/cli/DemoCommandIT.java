package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code trainwatch demo} end to end: a separate JVM, its printed page URL, its API and the anomalies it raises. */
class DemoCommandIT {

    @TempDir
    Path dir;

    @Test
    void servesFourSyntheticRunsWhoseAnomaliesTheDetectorsFind() throws Exception {
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "127.0.0.1:0",
                "--speed", "10")) {
            URI page = demo.pageUri();
            // The page's address can first show in the collector's log on stderr; stdout is flushed whole after it.
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> demo.stdout().contains("Ctrl-C stops"));
            assertThat(demo.stdout()).contains("SYNTHETIC");
            JsonNode first = demo.runs(page);
            assertThat(first).hasSize(5);
            assertThat(first).allMatch(r -> r.path("synthetic").asBoolean() && r.path("run_id").asText().startsWith("demo-"));

            // At ten times the speed, a minute of sustained trouble takes a few seconds.
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                Map<String, List<String>> active = activeByRun(demo.runs(page));
                assertThat(active.get("demo-pixart-sigma-online-features")).contains("data_starvation");
                assertThat(active.get("demo-sana-1600m-memory-creep")).contains("oom_risk");
                assertThat(active.get("demo-pixart-alpha-8gpu-straggler")).contains("throttling");
            });
            Map<String, List<String>> active = activeByRun(demo.runs(page));
            assertThat(active.get("demo-dit-xl-2-healthy")).as("the healthy run stays healthy").isEmpty();

            JsonNode starved = demo.getJson(page.resolve("v1/runs/demo-pixart-sigma-online-features"));
            assertThat(starved.path("observed").path("data_wait_ratio").asDouble()).isGreaterThan(0.5);
            assertThat(starved.path("estimate").path("step_seconds").asDouble()).isPositive();
            for (JsonNode anomaly : starved.path("anomalies")) {
                assertThat(anomaly.path("suggestion").asText()).isNotBlank();
                assertThat(anomaly.path("evidence").size()).isPositive();
            }
            String html = demo.getJson(page.resolve("v1/runs")).toString();
            assertThat(html).isNotEmpty();
        }
    }

    @Test
    void theFirstSigtermStopsTheDemoQuietly() throws Exception {
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "127.0.0.1:0",
                "--speed", "10")) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> demo.stdout().contains("Ctrl-C stops"));
            // Fed for a while (a tick may be in flight when the signal comes): every run has counted steps.
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
                JsonNode runs = demo.runs(demo.pageUri());
                return runs.size() == 5 && StreamSupport.stream(runs.spliterator(), false)
                        .allMatch(r -> r.path("observed").path("last_step").asLong(0) > 0);
            });
            demo.terminate();
            assertThat(demo.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.OK);
            assertThat(demo.stdout() + demo.stderr()).doesNotContain("feeding the collector failed");
        }
    }

    @Test
    void refusesASpeedOutOfRangeInOneLine() throws Exception {
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "127.0.0.1:0",
                "--speed", "1000")) {
            assertThat(demo.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.USAGE);
            assertThat(demo.stderr().strip()).startsWith("trainwatch: --speed must be between").doesNotContain("\n");
        }
    }

    @Test
    void aTakenDefaultPortMovesTheDemoToAFreeOneAndSaysSo() throws Exception {
        java.net.ServerSocket taken = null;
        try {
            taken = new java.net.ServerSocket(9477, 50, java.net.InetAddress.getLoopbackAddress());
        } catch (java.io.IOException alreadyTaken) {
            // Something else holds the default port: the situation this test wants.
        }
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--speed", "10")) {
            URI page = demo.pageUri();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> demo.stdout().contains("Ctrl-C stops"));
            assertThat(page.getPort()).isNotEqualTo(9477);
            assertThat(demo.stdout()).contains("127.0.0.1:9477 is taken, so the demo listens on port " + page.getPort());
            assertThat(demo.runs(page)).hasSize(5);
        } finally {
            if (taken != null) {
                taken.close();
            }
        }
    }

    @Test
    void canBeShownFromAnotherMachineWithATokenAndDeliversItsAlertsToAWebhook() throws Exception {
        Path token = dir.resolve("token");
        java.nio.file.Files.writeString(token, "demo-secret\n");
        List<String> delivered = new java.util.concurrent.CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer webhook = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        webhook.createContext("/hook", exchange -> {
            delivered.add(new String(exchange.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        webhook.start();
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "0.0.0.0:0",
                "--token-file", token.toString(), "--webhook",
                "http://127.0.0.1:" + webhook.getAddress().getPort() + "/hook", "--speed", "20",
                "--external-url", "https://gpu-demo.example.org/trainwatch")) {
            URI page = demo.pageUri();
            // The demo's own feed sends the token: its five runs arrive.
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(demo.runs(page)).hasSize(5));
            java.net.http.HttpResponse<String> anonymous = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(page.resolve("v1/runs/intruder/steps"))
                            .header("Content-Type", "application/json")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"step\":1,\"time_s\":1}"))
                            .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> assertThat(String.join("\n", delivered)).contains("data_starvation"));
            // Each alert links to its run's page at the external address.
            assertThat(String.join("\n", delivered))
                    .contains("\"run_url\":\"https://gpu-demo.example.org/trainwatch/#/runs/demo-");
        } finally {
            webhook.stop(0);
        }
    }

    @Test
    void anExposedAddressWithoutATokenIsRefusedInOneLine() throws Exception {
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "0.0.0.0:0")) {
            assertThat(demo.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.USAGE);
            assertThat(demo.stderr().strip()).startsWith("trainwatch: ").contains("--token-file").doesNotContain("\n");
        }
    }

    private static Map<String, List<String>> activeByRun(JsonNode runs) {
        Map<String, List<String>> active = new HashMap<>();
        for (JsonNode run : runs) {
            List<String> kinds = new java.util.ArrayList<>();
            run.path("anomalies").forEach(a -> {
                if (a.path("active").asBoolean()) {
                    kinds.add(a.path("kind").asText());
                }
            });
            active.put(run.path("run_id").asText(), kinds);
        }
        return active;
    }
}
