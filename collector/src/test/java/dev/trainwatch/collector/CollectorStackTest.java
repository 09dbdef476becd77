package dev.trainwatch.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The assembled collector keeps what it acknowledged across a restart on the same data directory. */
class CollectorStackTest {
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<String> log = new ArrayList<>();

    @TempDir
    Path dataDir;

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRegisteredRunSurvivesARestartAndShowsInTheHistory() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir);
        String spec = """
                {"model":"pixart-sigma-xl-2","gpu":"a800-80gb","batch":20,"resolution":1024,"precision":"fp16",
                 "optimizer":"came","grad_checkpointing":true,"features":"online","total_steps":10000}""";
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            HttpResponse<String> put = send(HttpRequest.newBuilder(base.resolve("/v1/runs/pixart-1"))
                    .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(spec)));
            assertThat(put.statusCode()).isEqualTo(200);
            assertThat(stack.restoredRuns()).isZero();
        }
        try (CollectorStack restarted = CollectorStack.start(config, log::add)) {
            assertThat(restarted.restoredRuns()).isEqualTo(1);
            URI base = restarted.server().uri();
            HttpResponse<String> run = send(HttpRequest.newBuilder(base.resolve("/v1/runs/pixart-1")));
            assertThat(run.statusCode()).isEqualTo(200);
            JsonNode body = Json.MAPPER.readTree(run.body());
            assertThat(body.at("/spec/batch").asInt()).isEqualTo(20);
            assertThat(body.at("/estimate/peak_memory_bytes").asLong()).isPositive();

            JsonNode history = Json.MAPPER.readTree(send(HttpRequest.newBuilder(base.resolve("/v1/history"))).body());
            assertThat(history.get("persistent").asBoolean()).isTrue();
            assertThat(history.at("/runs/0/run_id").asText()).isEqualTo("pixart-1");
            assertThat(send(HttpRequest.newBuilder(base.resolve("/v1/history?limit=0"))).statusCode()).isEqualTo(422);
        }
    }
}
