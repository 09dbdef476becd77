package dev.trainwatch.collector.alerting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.protocol.Json;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SinksTest {
    private HttpServer server;
    private final List<String> paths = new ArrayList<>();
    private final List<JsonNode> bodies = new ArrayList<>();
    private final AtomicInteger status = new AtomicInteger(200);

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            paths.add(exchange.getRequestURI().getPath());
            bodies.add(Json.MAPPER.readTree(exchange.getRequestBody().readAllBytes()));
            byte[] answer = "{\"error\":\"nope\"}".getBytes();
            exchange.sendResponseHeaders(status.get(), answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @Test
    void alertmanagerGetsApiV2AlertsWithRunKindSeverityAndSuggestion() throws Exception {
        AlertmanagerSink sink = new AlertmanagerSink(base(),
                new RunLinks(URI.create("https://trainwatch.example.org/gpu/")));
        AlertNotice firing = AlertDispatcherTest.notice("run-7", "data_starvation");
        sink.deliver(List.of(firing, firing.resolvedAt(Instant.parse("2026-11-22T08:10:00Z"))));
        assertThat(paths).containsExactly("/api/v2/alerts");
        JsonNode alerts = bodies.get(0);
        assertThat(alerts).hasSize(2);
        JsonNode first = alerts.get(0);
        assertThat(first.at("/labels/alertname").asText()).isEqualTo("TrainwatchDataStarvation");
        assertThat(first.at("/labels/run_id").asText()).isEqualTo("run-7");
        assertThat(first.at("/labels/kind").asText()).isEqualTo("data_starvation");
        assertThat(first.at("/labels/severity").asText()).isEqualTo("warning");
        assertThat(first.at("/annotations/suggestion").asText()).isEqualTo("do something");
        assertThat(first.at("/annotations/description").asText()).contains("ratio=2.5");
        assertThat(first.has("endsAt")).isFalse();
        // The link goes to the run's page (not the raw JSON of GET /v1/runs/<id>), at the external address.
        assertThat(first.get("generatorURL").asText()).isEqualTo("https://trainwatch.example.org/gpu/#/runs/run-7");
        assertThat(first.at("/annotations/run_page").asText()).isEqualTo(first.get("generatorURL").asText());
        assertThat(alerts.get(1).at("/endsAt").asText()).isEqualTo("2026-11-22T08:10:00Z");
    }

    /**
     * A pair of collectors (docs/DEPLOY.md) sends the same alert twice: Alertmanager de-duplicates alerts by their
     * labels, so those must not say which collector sent them (no instance, no address); only the links differ.
     */
    @Test
    void twoCollectorsSendTheSameAlertWithIdenticalLabelsSoAlertmanagerSendsOneNotification() throws Exception {
        AlertNotice firing = AlertDispatcherTest.notice("run-7", "straggler");
        new AlertmanagerSink(base(), new RunLinks(URI.create("https://collector-a.example.org/"))).deliver(
                List.of(firing));
        new AlertmanagerSink(base(), new RunLinks(URI.create("https://collector-b.example.org/"))).deliver(
                List.of(firing));
        assertThat(bodies).hasSize(2);
        JsonNode fromA = bodies.get(0).get(0);
        JsonNode fromB = bodies.get(1).get(0);
        assertThat(fromA.get("labels")).isEqualTo(fromB.get("labels"));
        assertThat(fromA.get("labels").toString()).doesNotContain("collector-a").doesNotContain("instance");
    }

    @Test
    void webhookAndLogLinkToTheRunsPageAtTheAddressTheServerListensOnWhenNoExternalUrlIsSet() throws Exception {
        RunLinks links = new RunLinks(null);
        links.listening("10.1.2.3", 9477, false);
        new WebhookSink(URI.create(base() + "/hook"), links).deliver(List.of(AlertDispatcherTest.notice("r 1", "stalled")));
        assertThat(bodies.get(0).at("/alerts/0/run_url").asText()).isEqualTo("http://10.1.2.3:9477/#/runs/r%201");
        List<String> lines = new java.util.ArrayList<>();
        new LogSink(lines::add, links).deliver(List.of(AlertDispatcherTest.notice("r", "stalled")));
        assertThat(lines).singleElement().satisfies(line -> assertThat(line).endsWith("(http://10.1.2.3:9477/#/runs/r)"));
        RunLinks wildcard = new RunLinks(null);
        wildcard.listening("0.0.0.0", 9477, false);
        assertThat(wildcard.runPage("r")).doesNotContain("0.0.0.0").endsWith(":9477/#/runs/r");
    }

    @Test
    void webhookGetsStatusAndTheAnomaly() throws Exception {
        new WebhookSink(URI.create(base() + "/hook"), null)
                .deliver(List.of(AlertDispatcherTest.notice("r", "stalled")));
        JsonNode alert = bodies.get(0).at("/alerts/0");
        assertThat(alert.get("status").asText()).isEqualTo("firing");
        assertThat(alert.get("run_id").asText()).isEqualTo("r");
        assertThat(alert.at("/evidence/ratio").asDouble()).isEqualTo(2.5);
    }

    @Test
    void serverErrorsAreRetryableAndClientErrorsAreNot() {
        WebhookSink sink = new WebhookSink(URI.create(base() + "/hook"), null);
        status.set(503);
        assertThatThrownBy(() -> sink.deliver(List.of(AlertDispatcherTest.notice("r", "stalled"))))
                .isInstanceOfSatisfying(DeliveryException.class, e -> {
                    assertThat(e.retryable()).isTrue();
                    assertThat(e.getMessage()).contains("503").doesNotContain("\n");
                });
        status.set(400);
        assertThatThrownBy(() -> sink.deliver(List.of(AlertDispatcherTest.notice("r", "stalled"))))
                .isInstanceOfSatisfying(DeliveryException.class, e -> assertThat(e.retryable()).isFalse());
    }

    @Test
    void anUnreachableReceiverIsARetryableOneLineError() {
        int port = server.getAddress().getPort();
        server.stop(0);
        WebhookSink sink = new WebhookSink(URI.create("http://127.0.0.1:" + port + "/hook"), null);
        assertThatThrownBy(() -> sink.deliver(List.of(AlertDispatcherTest.notice("r", "stalled"))))
                .isInstanceOfSatisfying(DeliveryException.class, e -> {
                    assertThat(e.retryable()).isTrue();
                    assertThat(e.getMessage()).contains("unreachable");
                });
    }

    @Test
    void logLineIsOneLineWithTheSuggestion() {
        assertThat(LogSink.line(AlertDispatcherTest.notice("r1", "oom_risk")))
                .isEqualTo("trainwatch alert FIRING warning oom_risk run=r1: oom_risk on r1 — do something");
    }

    @Test
    void anAlertThatEndsWithItsRunIsNeverAnnouncedAsResolvedInWords() throws Exception {
        AlertNotice firing = AlertDispatcherTest.notice("run-8", "loss_nonfinite");
        AlertNotice ended = firing.endedWithRunAt(Instant.parse("2026-11-22T08:20:00Z"));
        new AlertmanagerSink(base(), null).deliver(List.of(ended));
        JsonNode alert = bodies.get(0).get(0);
        // Same labels, so the firing alert's routes, inhibitions and silences match; it ends, and says why.
        assertThat(alert.at("/labels/alertname").asText()).isEqualTo("TrainwatchLossNonfinite");
        assertThat(alert.at("/labels/severity").asText()).isEqualTo("warning");
        assertThat(alert.at("/endsAt").asText()).isEqualTo("2026-11-22T08:20:00Z");
        assertThat(alert.at("/annotations/ended_with_run").asText()).isEqualTo("true");
        assertThat(alert.at("/annotations/summary").asText()).startsWith("Unresolved when the run ended: ");
        assertThat(alert.at("/annotations/outcome").asText()).isEqualTo(AlertNotice.ENDED_WITH_RUN);

        new WebhookSink(URI.create(base() + "/hook"), null).deliver(List.of(ended));
        assertThat(bodies.get(1).at("/alerts/0/status").asText()).isEqualTo("ended_with_run");
        assertThat(LogSink.line(ended)).startsWith("trainwatch alert UNRESOLVED warning loss_nonfinite run=run-8: "
                + "the run ended while this was active; it was not fixed").doesNotContain("alert RESOLVED");
        // A resolved one is unchanged.
        AlertNotice resolved = firing.resolvedAt(Instant.parse("2026-11-22T08:20:00Z"));
        assertThat(LogSink.line(resolved)).startsWith("trainwatch alert RESOLVED warning loss_nonfinite");
        assertThat(new AlertmanagerSink(base(), null).body(List.of(resolved)).get(0).get("annotations"))
                .asInstanceOf(InstanceOfAssertFactories.MAP).doesNotContainKey("ended_with_run");
    }
}
