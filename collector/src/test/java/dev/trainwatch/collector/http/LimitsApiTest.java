package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.collector.support.RunningCollector;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A full collector answers a new run or agent with 429, Retry-After and a JSON error naming the limit. */
class LimitsApiTest {
    private final RunningCollector collector = new RunningCollector(CollectorConfig.defaults().withListen("127.0.0.1", 0),
            new FleetSettings(2, 16, 1, Duration.ofMinutes(10), 60, 16, Duration.ofSeconds(1), 5,
                    Duration.ofHours(24)));

    @AfterEach
    void stop() {
        collector.close();
    }

    private HttpResponse<String> step(String runId) {
        return collector.postJson("/v1/runs/" + runId + "/steps",
                ApiTest.utf8("{\"step\":1,\"time_s\":1.0,\"ts\":" + collector.clock.seconds() + "}"));
    }

    @Test
    void aNewRunBeyondTheLimitOfLiveRunsIs429AndTheLiveRunsStay() throws IOException {
        assertThat(step("a").statusCode()).isEqualTo(200);
        assertThat(step("b").statusCode()).isEqualTo(200);
        collector.clock.advance(Duration.ofSeconds(30));
        HttpResponse<String> refused = step("c");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("570");
        JsonNode body = ApiTest.json(refused);
        assertThat(ApiTest.error(refused)).startsWith("run limit 2 reached: every slot holds a run that reported in"
                + " the last 10 minutes");
        assertThat(body.get("limit").asText()).isEqualTo("runs");
        assertThat(body.get("limit_value").asInt()).isEqualTo(2);
        assertThat(collector.get("/v1/runs/a").statusCode()).isEqualTo(200);
        assertThat(collector.get("/v1/runs/c").statusCode()).isEqualTo(404);

        HttpResponse<String> spec = collector.putJson("/v1/runs/d", ApiTest.utf8("{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"batch\":8}"));
        assertThat(spec.statusCode()).isEqualTo(429);

        JsonNode runsLimit = ApiTest.json(collector.get("/v1/runs")).get("limits").get(0);
        assertThat(runsLimit.get("limit").asText()).isEqualTo("runs");
        assertThat(runsLimit.get("used").asInt()).isEqualTo(2);
        assertThat(runsLimit.get("max").asInt()).isEqualTo(2);
        assertThat(runsLimit.get("refused").asInt()).isEqualTo(2);
        assertThat(runsLimit.get("last_refused_ts").asDouble()).isEqualTo(collector.clock.seconds());

        String metrics = collector.get("/metrics").body();
        assertThat(metrics).contains("trainwatch_limit_refused_total{reason=\"runs\"} 2.0")
                .contains("trainwatch_limit_entries{reason=\"runs\"} 2.0")
                .contains("trainwatch_limit_max_entries{reason=\"runs\"} 2.0")
                .contains("trainwatch_ingest_requests_total{outcome=\"limited\"} 2.0");
    }

    @Test
    void aBatchBringingGpusBeyondTheLimitIs429AndHealthzSaysRefusingNotOk() throws IOException {
        RunningCollector small = new RunningCollector(CollectorConfig.defaults().withListen("127.0.0.1", 0),
                new FleetSettings(2, 1, 4, Duration.ofMinutes(10), 60, 16, Duration.ofSeconds(1), 5,
                        Duration.ofHours(24)));
        try {
            double t = small.clock.seconds();
            assertThat(small.postJson("/v1/samples", Payloads.json(Payloads.batch("node1", 1, t, 1, null)))
                    .statusCode()).isEqualTo(200);
            assertThat(ApiTest.json(small.get("/healthz")).get("status").asText()).isEqualTo("ok");

            HttpResponse<String> refused = small.postJson("/v1/samples",
                    Payloads.json(Payloads.batch("node2", 1, t, 1, null)));
            assertThat(refused.statusCode()).as("never 200 with the readings dropped").isEqualTo(429);
            assertThat(ApiTest.error(refused)).startsWith("GPU limit 1 reached").contains("--max-gpus");
            assertThat(refused.headers().firstValue("Retry-After")).hasValue("600");

            HttpResponse<String> health = small.get("/healthz");
            assertThat(health.statusCode()).as("up, so probes keep it in service").isEqualTo(200);
            JsonNode body = ApiTest.json(health);
            assertThat(body.get("status").asText()).isEqualTo("refusing");
            assertThat(body.get("refusing").get(0).asText()).isEqualTo("gpus");
            assertThat(body.get("refusing_message").asText()).contains("--max-gpus");
            assertThat(small.get("/metrics").body()).contains("trainwatch_limit_refused_total{reason=\"gpus\"} 1.0");
        } finally {
            small.close();
        }
    }

    @Test
    void aSpecBeyondTheSpecLimitIs429AndTheAcceptedSpecStays() throws IOException {
        String spec = "{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"batch\":8}";
        assertThat(collector.putJson("/v1/runs/planned", ApiTest.utf8(spec)).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = collector.putJson("/v1/runs/another", ApiTest.utf8(spec));
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(ApiTest.json(refused).get("limit").asText()).isEqualTo("specs");
        assertThat(ApiTest.error(refused)).startsWith("spec limit 1 reached");
        assertThat(collector.get("/v1/runs/planned").statusCode()).isEqualTo(200);
        assertThat(collector.get("/v1/runs/another").statusCode()).isEqualTo(404);
    }

    @Test
    void aNewAgentBeyondTheLimitIs429SoItSpoolsAndRetries() throws IOException {
        double t = collector.clock.seconds();
        assertThat(collector.postJson("/v1/samples", Payloads.json(Payloads.batch("node1", 1, t, 1, null)))
                .statusCode()).isEqualTo(200);
        HttpResponse<String> refused = collector.postJson("/v1/samples",
                Payloads.json(Payloads.batch("node2", 1, t, 1, null)));
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(ApiTest.error(refused)).startsWith("agent limit 1 reached");
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    }
}
