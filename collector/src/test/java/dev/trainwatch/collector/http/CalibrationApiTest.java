package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.collector.history.RunOutcome;
import dev.trainwatch.protocol.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The calibration shows its runs, and a user can leave a run out or start a group afresh, over the API. */
class CalibrationApiTest {
    private static final Instant T = Instant.parse("2026-11-20T08:00:00Z");
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    private HttpResponse<String> send(URI base, String method, String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void factorsShowTheirRunsAndCanBeSteered() throws Exception {
        try (HistoryStore store = HistoryStore.open(dir)) {
            for (int i = 0; i < 3; i++) {
                store.writeSummaries(List.of(), List.of(new RunOutcome("dit-" + i, "a100-80gb", "dit", 1.0, 1.4, 40L,
                        44L, T.plusSeconds(i))));
            }
        }
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dir)
                .withToken("sekrit");
        try (CollectorStack stack = CollectorStack.start(config, line -> { })) {
            URI base = URI.create(stack.server().uri() + "/");
            JsonNode group = Json.MAPPER.readTree(send(base, "GET", "v1/calibration", null).body())
                    .path("calibration").get(0);
            assertThat(group.path("applied").asBoolean()).isTrue();
            assertThat(group.path("step_time_factor").asDouble()).isBetween(1.2, 1.25);
            assertThat(group.path("used_runs")).hasSize(3);

            assertThat(send(base, "POST", "v1/calibration/runs/dit-1/exclude", null).statusCode()).isEqualTo(401);
            HttpResponse<String> excluded = send(base, "POST", "v1/calibration/runs/dit-1/exclude", "sekrit");
            assertThat(excluded.statusCode()).isEqualTo(200);
            JsonNode after = Json.MAPPER.readTree(excluded.body()).path("calibration").get(0);
            assertThat(after.path("applied").asBoolean()).isFalse();
            assertThat(after.path("step_time_factor").asDouble()).isEqualTo(1.0);
            assertThat(after.path("excluded_runs").get(0).asText()).isEqualTo("dit-1");

            HttpResponse<String> unknown = send(base, "POST", "v1/calibration/runs/nope/exclude", "sekrit");
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(Json.MAPPER.readTree(unknown.body()).path("error").asText())
                    .isEqualTo("no finished run 'nope' in the calibration history");

            assertThat(send(base, "POST", "v1/calibration/runs/dit-1/include", "sekrit").statusCode()).isEqualTo(200);
            HttpResponse<String> reset = send(base, "DELETE", "v1/calibration/a100-80gb/dit", "sekrit");
            assertThat(reset.statusCode()).isEqualTo(200);
            JsonNode afterReset = Json.MAPPER.readTree(reset.body()).path("calibration").get(0);
            assertThat(afterReset.path("applied").asBoolean()).isFalse();
            assertThat(afterReset.path("used_runs")).isEmpty();
            assertThat(send(base, "DELETE", "v1/calibration/a100-80gb/nope", "sekrit").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void withoutADataDirectoryChangesAreRefusedSayingWhy() throws Exception {
        try (CollectorStack stack = CollectorStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0),
                line -> { })) {
            URI base = URI.create(stack.server().uri() + "/");
            HttpResponse<String> response = send(base, "POST", "v1/calibration/runs/x/exclude", null);
            assertThat(response.statusCode()).isEqualTo(409);
            assertThat(response.body()).contains("--data-dir");
        }
    }
}
