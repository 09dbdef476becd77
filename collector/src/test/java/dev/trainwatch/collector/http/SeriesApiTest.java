package dev.trainwatch.collector.http;

import static dev.trainwatch.collector.http.ApiTest.error;
import static dev.trainwatch.collector.http.ApiTest.json;
import static dev.trainwatch.collector.http.ApiTest.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/runs/{id}/series} over a real server on loopback. */
class SeriesApiTest {

    private static final String RUN = "series-api";
    static RunningCollector collector;
    static double start;

    /** Two minutes of a 4-GPU run: a poll a second, a step report every ten, registered spec. */
    @BeforeAll
    static void startWithHistory() {
        collector = RunningCollector.start();
        assertThat(collector.putJson("/v1/runs/" + RUN, utf8("{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\","
                + "\"gpus\":4,\"batch\":8}")).statusCode()).isEqualTo(200);
        start = collector.clock.seconds();
        for (int t = 0; t < 120; t++) {
            double ts = collector.clock.seconds();
            assertThat(collector.postJson("/v1/samples", Payloads.json(Payloads.batch("series-host", t + 1, ts, 4, RUN)))
                    .statusCode()).isEqualTo(200);
            if (t % 10 == 9) {
                assertThat(collector.postJson("/v1/runs/" + RUN + "/steps", utf8("{\"step\":" + (t + 1)
                        + ",\"time_s\":1.5,\"data_time_s\":0.3,\"interval_steps\":10,\"loss\":0.25,\"ts\":" + ts + "}"))
                        .statusCode()).isEqualTo(200);
            }
            collector.clock.advanceSeconds(1);
        }
    }

    @AfterAll
    static void stop() {
        collector.close();
    }

    private static HttpResponse<String> series(String query) {
        return collector.get("/v1/runs/" + RUN + "/series" + query);
    }

    @Test
    void answersTheRunsHistoryWithPredictionsStepsAndGpus() throws IOException {
        HttpResponse<String> response = series("");
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode body = json(response);
        assertThat(body.get("run_id").asText()).isEqualTo(RUN);
        assertThat(body.get("window_seconds").asDouble()).isEqualTo(600);
        assertThat(body.get("max_points").asInt()).isEqualTo(600);
        assertThat(body.get("downsampled").asBoolean()).isFalse();
        assertThat(body.has("since_ts")).as("nulls are omitted").isFalse();
        assertThat(body.at("/predicted/step_seconds").asDouble()).isEqualTo(FakePredictor.FIXED_STEP_SECONDS);
        assertThat(body.at("/predicted/peak_memory_bytes").asLong()).isEqualTo(FakePredictor.FIXED_PEAK_BYTES);
        assertThat(body.at("/predicted/samples_per_second").asDouble()).isEqualTo(8 * 4 / FakePredictor.FIXED_STEP_SECONDS);
        assertThat(body.get("capacity_bytes").asLong()).isEqualTo(Payloads.A100_BYTES);

        JsonNode points = body.get("points");
        assertThat(points.size()).isEqualTo(120);
        assertThat(points.get(0).get("ts").asDouble()).isEqualTo(start);
        JsonNode last = points.get(119);
        assertThat(last.get("memory_used_bytes").asLong()).isEqualTo(40_000_000_000L + 3_000_000L);
        assertThat(last.get("gpu_count").asInt()).isEqualTo(4);
        assertThat(last.get("step_seconds").asDouble()).isEqualTo(1.5);
        assertThat(last.get("data_wait_ratio").asDouble()).isEqualTo(0.2);
        assertThat(last.get("samples_per_second").asDouble()).as("spec's global batch / step time")
                .isEqualTo(32 / 1.5);
        assertThat(last.get("loss").asDouble()).isEqualTo(0.25);

        assertThat(body.get("steps").size()).isEqualTo(12);
        assertThat(body.at("/steps/11/step").asLong()).isEqualTo(120);
        assertThat(body.get("gpus").size()).isEqualTo(4);
        assertThat(body.at("/gpus/0/uuid").asText()).isEqualTo(Payloads.uuid("series-host", 0));
        assertThat(body.at("/gpus/0/points").size()).isEqualTo(120);
        assertThat(body.at("/gpus/0/points/0/power_watts").asDouble()).isEqualTo(312.5);
        assertThat(body.at("/gpus/0/points/0/sm_clock_hz").asLong()).isEqualTo(1_410_000_000L);
    }

    @Test
    void sinceTakesEpochMillisecondsOrRfc3339() throws IOException {
        long sinceMs = (long) ((start + 60) * 1000);
        String rfc = Instant.ofEpochMilli(sinceMs).toString(); // 2026-01-01T00:01:00Z
        String offset = "2026-01-01T01:01:00+01:00";
        for (String query : List.of("?since=" + sinceMs, "?since=" + rfc, "?since=" + offset.replace("+", "%2B"),
                "?since=" + offset /* '+' unencoded arrives as a space */, "?since=2026-01-01t00:01:00z",
                "?since=2026-01-01%2001:01:00%2B01:00")) {
            HttpResponse<String> response = series(query);
            assertThat(response.statusCode()).as(query + ": " + response.body()).isEqualTo(200);
            JsonNode body = json(response);
            assertThat(body.get("since_ts").asDouble()).as(query).isEqualTo(start + 60);
            assertThat(body.get("points").size()).as(query).isEqualTo(60);
            assertThat(body.at("/points/0/ts").asDouble()).as(query).isEqualTo(start + 60);
            assertThat(body.get("steps").size()).as(query).isEqualTo(6);
        }
    }

    @Test
    void maxPointsDownsamplesKeepingFirstAndLast() throws IOException {
        JsonNode body = json(series("?max_points=10&gpus=false"));
        assertThat(body.get("downsampled").asBoolean()).isTrue();
        assertThat(body.has("gpus")).isFalse();
        JsonNode points = body.get("points");
        assertThat(points.size()).isBetween(3, 10);
        assertThat(points.get(0).get("ts").asDouble()).isEqualTo(start);
        assertThat(points.get(points.size() - 1).get("ts").asDouble()).isEqualTo(start + 119);
        assertThat(body.get("steps").size()).isEqualTo(10);
        assertThat(body.at("/steps/0/step").asLong()).isEqualTo(10);
        assertThat(body.at("/steps/9/step").asLong()).isEqualTo(120);
    }

    @Test
    void malformedOrHostileParametersAre400WithOneLine() throws IOException {
        record Case(String query, String message) {
        }
        List<Case> cases = List.of(
                new Case("?max_points=abc", "max_points must be an integer from 10 to 2000"),
                new Case("?max_points=9", "max_points must be an integer from 10 to 2000, got '9'"),
                new Case("?max_points=2001", "max_points must be an integer from 10 to 2000"),
                new Case("?max_points=-5", "max_points must be an integer"),
                new Case("?max_points=1e3", "max_points must be an integer"),
                new Case("?max_points=99999999999999999999999", "max_points must be an integer"),
                new Case("?max_points=", "max_points must be an integer"),
                new Case("?max_points=10&max_points=20", "max_points is given 2 times; give it once"),
                new Case("?since=yesterday", "since must be epoch milliseconds or an RFC 3339 time"),
                new Case("?since=1767225600", "looks like unix seconds; send epoch milliseconds (1767225600000)"),
                new Case("?since=99999999999999", "beyond the year 2286"),
                new Case("?since=2026-01-01T00:00:00", "since must be epoch milliseconds or an RFC 3339 time"),
                new Case("?since=2026-13-45T00:00:00Z", "since must be epoch milliseconds or an RFC 3339 time"),
                new Case("?since=-1", "since must be epoch milliseconds or an RFC 3339 time"),
                new Case("?since=" + "9".repeat(300), "since is longer than 64 characters"),
                new Case("?since=%0A%0D%00", "since must be epoch milliseconds or an RFC 3339 time"),
                new Case("?gpus=maybe", "gpus must be true or false"));
        for (Case c : cases) {
            HttpResponse<String> response = series(c.query());
            assertThat(response.statusCode()).as(c.query() + ": " + response.body()).isEqualTo(400);
            assertThat(error(response)).as(c.query()).contains(c.message());
        }
    }

    /**
     * Query strings the HTTP client would refuse to send, written on a raw socket. (A query that does not decode
     * once got a plain-text 400 from Vert.x on every route with a path parameter, GET /v1/runs/{id} included.)
     */
    @Test
    void brokenPercentEncodingIsAJson400() throws IOException {
        for (String path : List.of("/v1/runs/" + RUN + "/series?max_points=%", "/v1/runs/" + RUN + "/series?since=%zz",
                "/v1/runs/" + RUN + "/series?since=%ff%fe", "/v1/runs/" + RUN + "/series?max_points=1%00",
                "/v1/runs/" + RUN + "?x=%")) {
            String answer = raw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            assertThat(answer).as(path).startsWith("HTTP/1.1 400");
            String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
            String message = Json.MAPPER.readTree(body).path("error").asText();
            assertThat(message).as(path + ": " + answer).isNotBlank().doesNotContain("\n");
        }
        String put = raw("PUT /v1/runs/" + RUN + "-put?x=% HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
        assertThat(put).startsWith("HTTP/1.1 400").contains("malformed URL");
        assertThat(collector.get("/v1/runs/" + RUN + "-put").statusCode()).as("nothing registered").isEqualTo(404);
    }

    private static String raw(String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", collector.uri("/").getPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void unknownRunsAre404LikeTheOtherRunEndpoints() throws IOException {
        HttpResponse<String> unknown = collector.get("/v1/runs/never-seen/series");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(error(unknown)).isEqualTo("unknown run 'never-seen'");
        HttpResponse<String> badId = collector.get("/v1/runs/bad%20id/series");
        assertThat(badId.statusCode()).isEqualTo(404);
        assertThat(error(badId)).startsWith("unknown run");
        HttpResponse<String> post = collector.send("POST", "/v1/runs/" + RUN + "/series", "application/json", utf8("{}"));
        assertThat(post.statusCode()).isEqualTo(405);
    }

    @Test
    void readingIsOpenWhenATokenIsSetLikeTheOtherReads() throws IOException {
        try (RunningCollector guarded = new RunningCollector(CollectorConfig.defaults().withListen("127.0.0.1", 0)
                .withToken("s3cret"))) {
            assertThat(guarded.putJson("/v1/runs/guarded", utf8("{}")).statusCode()).isEqualTo(401);
            assertThat(guarded.putJson("/v1/runs/guarded", utf8("{}"), "Authorization", "Bearer s3cret").statusCode())
                    .isEqualTo(200);
            HttpResponse<String> read = guarded.get("/v1/runs/guarded/series");
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(json(read).get("points").size()).isZero();
        }
    }
}
