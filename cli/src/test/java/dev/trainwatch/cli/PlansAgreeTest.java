package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * "This run on 8×H100": the collector's {@code GET /v1/runs/{id}/plans} and {@code trainwatch estimate --from-run}
 * re-price an observed run the same way, anchored on its own step, data and encoder times (issue 21), and a run
 * re-priced on its own hardware comes back at the step it was observed at.
 */
class PlansAgreeTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return HTTP.send(b.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(URI base, String path) throws Exception {
        return send(HttpRequest.newBuilder(base.resolve(path)).GET());
    }

    private static void put(URI base, String path, String json) throws Exception {
        assertThat(send(HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json))).statusCode()).isEqualTo(200);
    }

    private static void post(URI base, String path, String json) throws Exception {
        assertThat(send(HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))).statusCode()).isBetween(200, 299);
    }

    @Test
    void theCollectorAndTheCommandLineRepriceAnObservedPixArtRunAlike(@TempDir Path dir) throws Exception {
        SettableClock clock = new SettableClock(Instant.now().minusSeconds(3600));
        JsonNode api;
        JsonNode own;
        try (CollectorStack collector = CollectorStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0)
                .withClock(clock).withDataDir(dir), line -> { })) {
            URI base = URI.create(collector.server().uri() + "/");
            put(base, "v1/runs/sigma", "{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"gpus\":1,\"batch\":8,"
                    + "\"resolution\":1024,\"features\":\"online\",\"total_steps\":20000}");
            // PixArt's log: 9.2 s a step, 6.0 s of it in time_data (the loader and the online T5/VAE encoding).
            for (int i = 1; i <= 40; i++) {
                clock.advanceSeconds(9.2);
                post(base, "v1/runs/sigma/steps", "{\"step\":" + i + ",\"time_s\":9.2,\"data_time_s\":6.0,\"ts\":"
                        + clock.seconds() + "}");
            }
            HttpResponse<String> r = get(base, "v1/runs/sigma/plans?gpu=a100-80gb,h100-sxm&gpus=8");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            api = Json.MAPPER.readTree(r.body());
            HttpResponse<String> self = get(base, "v1/runs/sigma/plans");
            own = Json.MAPPER.readTree(self.body());

            // What cannot be re-priced says why, in one line.
            assertThat(get(base, "v1/runs/nobody/plans").statusCode()).isEqualTo(404);
            post(base, "v1/runs/nospec/steps", "{\"step\":1,\"time_s\":1.0,\"ts\":" + clock.seconds() + "}");
            HttpResponse<String> noSpec = get(base, "v1/runs/nospec/plans");
            assertThat(noSpec.statusCode()).isEqualTo(409);
            assertThat(Json.MAPPER.readTree(noSpec.body()).get("error").asText()).contains("has no spec");
            HttpResponse<String> badGpu = get(base, "v1/runs/sigma/plans?gpu=a100-81gb");
            assertThat(badGpu.statusCode()).isEqualTo(400);
            assertThat(Json.MAPPER.readTree(badGpu.body()).get("error").asText()).contains("a100-81gb");
            assertThat(get(base, "v1/runs/sigma/plans?gpus=0").statusCode()).isEqualTo(400);
            assertThat(get(base, "v1/runs/sigma/plans?batch=x").statusCode()).isEqualTo(400);
        }

        // On its own GPU and count, the run comes back at the step it was observed at.
        assertThat(own.get("plans")).hasSize(1);
        assertThat(own.get("plans").get(0).get("gpu").asText()).isEqualTo("a100-80gb");
        assertThat(own.get("plans").get(0).get("step_seconds").asDouble()).isCloseTo(9.2, within(0.01));
        assertThat(own.get("observed").get("data_includes_encoders").asBoolean()).isTrue();

        JsonNode plans = api.get("plans");
        assertThat(plans).hasSize(2);
        double a100 = plans.get(0).get("step_seconds").asDouble();
        double h100 = plans.get(1).get("step_seconds").asDouble();
        assertThat(plans.get(1).get("gpus").asInt()).isEqualTo(8);
        assertThat(plans.get(1).get("remaining_seconds").asDouble()).isPositive();

        // The command line over the collector's history gives the same figures.
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = TrainwatchCommand.newCommandLine(new PrintWriter(out), new PrintWriter(err)).execute("estimate",
                "--from-run", "sigma", "--compare-gpus", "a100-80gb,h100-sxm", "--gpus", "8", "--data-dir",
                dir.toString(), "--json");
        assertThat(status).as(err.toString()).isZero();
        JsonNode cli = Json.MAPPER.readTree(out.toString()).get("plans");
        assertThat(cli.get(0).get("step_seconds").asDouble()).isCloseTo(a100, within(a100 * 0.01));
        assertThat(cli.get(1).get("step_seconds").asDouble()).isCloseTo(h100, within(h100 * 0.01));
    }
}
