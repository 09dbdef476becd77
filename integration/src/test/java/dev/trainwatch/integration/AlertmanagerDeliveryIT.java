package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.alerting.AlertDispatcher;
import dev.trainwatch.collector.alerting.AlertNotice;
import dev.trainwatch.collector.alerting.AlertmanagerSink;
import dev.trainwatch.collector.alerting.RunLinks;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Alert delivery against a real Alertmanager (Debian's {@code prometheus-alertmanager}): a firing anomaly is
 * readable from Alertmanager's own API with trainwatch's labels and suggestion, and disappears once resolved.
 * Also: Alertmanager started only after the alert was raised still receives it (retries with backoff).
 */
class AlertmanagerDeliveryIT {
    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    @AfterEach
    void stopProcesses() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void firingAndResolvedAnomaliesReachAlertmanager() throws Exception {
        int port = PeerProcess.freePort();
        AlertDispatcher.Settings settings = new AlertDispatcher.Settings(Duration.ofMillis(100),
                Duration.ofMillis(500), Duration.ofSeconds(30), 1000);
        List<String> log = new ArrayList<>();
        try (AlertDispatcher dispatcher = new AlertDispatcher(
                List.of(new AlertmanagerSink(URI.create("http://127.0.0.1:" + port),
                        new RunLinks(URI.create("http://127.0.0.1:9477/")))),
                settings, Clock.systemUTC(), line -> {
                    synchronized (log) {
                        log.add(line);
                    }
                })) {
            Instant since = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            AlertNotice firing = new AlertNotice("pixart-run-1", "data_starvation", "critical", since, null,
                    "GPU waits for data 71% of each step", "precompute T5 and VAE features",
                    Map.of("data_wait_ratio", 0.71), null, false);
            // Raised while Alertmanager is still down: the dispatcher must keep it and retry.
            dispatcher.publish(firing);
            await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.outcomes().get("retry") > 0);

            startAlertmanager(port);
            JsonNode alert = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> findAlert(port, "pixart-run-1"), a -> a != null);
            assertThat(alert.at("/labels/alertname").asText()).isEqualTo("TrainwatchDataStarvation");
            assertThat(alert.at("/labels/kind").asText()).isEqualTo("data_starvation");
            assertThat(alert.at("/labels/severity").asText()).isEqualTo("critical");
            assertThat(alert.at("/annotations/suggestion").asText()).isEqualTo("precompute T5 and VAE features");
            assertThat(alert.at("/status/state").asText()).isEqualTo("active");
            assertThat(Instant.parse(alert.get("startsAt").asText())).isEqualTo(since);

            dispatcher.publish(firing.resolvedAt(Instant.now()));
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> findAlert(port, "pixart-run-1") == null);
        }
    }

    /**
     * Issue 44: an anomaly still active when its run ended leaves Alertmanager with its labels unchanged (routes and
     * silences still match) and annotations that say it was not fixed. Its end is set a few seconds ahead here so
     * that Alertmanager's API still lists it while the annotations are read; then it lapses as resolved ones do.
     */
    @Test
    void anAlertThatEndsWithItsRunReachesAlertmanagerSayingItWasNotFixed() throws Exception {
        int port = PeerProcess.freePort();
        startAlertmanager(port);
        AlertDispatcher.Settings settings = new AlertDispatcher.Settings(Duration.ofMillis(100),
                Duration.ofMillis(500), Duration.ofSeconds(30), 1000);
        try (AlertDispatcher dispatcher = new AlertDispatcher(
                List.of(new AlertmanagerSink(URI.create("http://127.0.0.1:" + port), null)),
                settings, Clock.systemUTC(), line -> { })) {
            AlertNotice firing = new AlertNotice("dit-run-9", "loss_nonfinite", "critical",
                    Instant.now().truncatedTo(ChronoUnit.SECONDS), null, "loss is NaN since step 35",
                    "lower the learning rate", Map.of("first_nonfinite_step", 35), null, false);
            dispatcher.publish(firing);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> findAlert(port, "dit-run-9"), a -> a != null);
            dispatcher.publish(firing.endedWithRunAt(Instant.now().plusSeconds(4)));
            JsonNode ended = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> findAlert(port, "dit-run-9"),
                            a -> a != null && a.at("/annotations/ended_with_run").asText().equals("true"));
            assertThat(ended.at("/labels/severity").asText()).isEqualTo("critical");
            assertThat(ended.at("/annotations/summary").asText()).startsWith("Unresolved when the run ended: ");
            assertThat(ended.at("/annotations/outcome").asText()).isEqualTo(AlertNotice.ENDED_WITH_RUN);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> findAlert(port, "dit-run-9") == null);
        }
    }

    private void startAlertmanager(int port) throws IOException {
        Path config = Files.writeString(dir.resolve("alertmanager.yml"), """
                route:
                  receiver: blackhole
                  group_wait: 0s
                receivers:
                  - name: blackhole
                """);
        ProcessBuilder builder = new ProcessBuilder(
                ExternalCommand.require("prometheus-alertmanager", "prometheus-alertmanager").toString(),
                "--config.file=" + config,
                "--storage.path=" + dir.resolve("am-data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--cluster.listen-address=")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("alertmanager.log").toFile());
        processes.add(builder.start());
    }

    private JsonNode findAlert(int port, String runId) {
        try {
            HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/api/v2/alerts")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                return null;
            }
            for (JsonNode alert : Json.MAPPER.readTree(response.body())) {
                if (runId.equals(alert.at("/labels/run_id").asText())) {
                    return alert;
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
