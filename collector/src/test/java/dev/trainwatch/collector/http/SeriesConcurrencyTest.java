package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.Json;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * At most {@link ApiVerticle#MAX_SERIES_BUILDS} series builds run at once; more are refused at once with 503, a
 * one-line error and {@code Retry-After}, while ingest goes on. Builds are held in progress by the verticle's
 * hook, so nothing here depends on how long a build takes.
 */
class SeriesConcurrencyTest {

    private static final String RUN = "busy-run";

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final CountDownLatch release = new CountDownLatch(1);
    private Vertx vertx;
    private ApiVerticle verticle;

    @BeforeEach
    void start() throws Exception {
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withClock(clock);
        MetricsExporter metrics = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, true);
        vertx = Vertx.vertx();
        verticle = new ApiVerticle(config, fleet, metrics, List.of(), timeout -> true,
                new BearerAuth(config::token), null);
        vertx.deployVerticle(verticle).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + verticle.actualPort() + path))
                .timeout(Duration.ofSeconds(30));
    }

    private CompletableFuture<HttpResponse<String>> series() {
        return client.sendAsync(request("/v1/runs/" + RUN + "/series?gpus=false").GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> ingest(long seq) throws Exception {
        return client.send(request("/v1/samples").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Payloads.json(Payloads.batch("busy-host", seq,
                        clock.seconds(), 4, RUN)))).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void beyondTheCapASeriesRequestIs503WithRetryAfterAndIngestGoesOn() throws Exception {
        for (int t = 1; t <= 5; t++) {
            assertThat(ingest(t).statusCode()).isEqualTo(200);
            clock.advanceSeconds(1);
        }
        CountDownLatch building = new CountDownLatch(ApiVerticle.MAX_SERIES_BUILDS);
        verticle.beforeSeriesBuild = () -> {
            building.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < ApiVerticle.MAX_SERIES_BUILDS; i++) {
            held.add(series());
        }
        assertThat(building.await(30, TimeUnit.SECONDS)).as("both builds in progress").isTrue();

        HttpResponse<String> refused = series().get(30, TimeUnit.SECONDS);
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).contains("1");
        assertThat(refused.headers().firstValue("Content-Type")).contains("application/json");
        JsonNode body = Json.MAPPER.readTree(refused.body());
        assertThat(body.size()).isEqualTo(1);
        assertThat(body.get("error").asText())
                .isEqualTo("too many series requests in progress (at most 2 at once); retry after 1 s");
        assertThat(refused.body()).doesNotContain("\n");

        // The held builds occupy workers, not the event loop: ingest is answered meanwhile.
        assertThat(ingest(6).statusCode()).isEqualTo(200);

        release.countDown();
        for (CompletableFuture<HttpResponse<String>> f : held) {
            HttpResponse<String> answer = f.get(30, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(Json.MAPPER.readTree(answer.body()).get("run_id").asText()).isEqualTo(RUN);
        }
        // The permits came back: the next request is built again.
        HttpResponse<String> again = series().get(30, TimeUnit.SECONDS);
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(Json.MAPPER.readTree(again.body()).get("points").size()).isEqualTo(6);
    }

    @Test
    void refusedAndFailedRequestsGiveTheirPermitBack() throws Exception {
        assertThat(ingest(1).statusCode()).isEqualTo(200);
        // Unknown runs and 400s, more of them than the cap, one after the other: none keeps a permit.
        for (int i = 0; i < 3 * ApiVerticle.MAX_SERIES_BUILDS; i++) {
            assertThat(client.send(request("/v1/runs/nobody/series").GET().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
            assertThat(client.send(request("/v1/runs/" + RUN + "/series?max_points=1").GET().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(400);
        }
        assertThat(series().get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
}
