package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One job never blinds a node: a batch that attributes GPUs to a run whose id the API cannot take ({@code a/b}, a
 * space, {@code ü}, 129 characters, {@code ..}) is applied without that run — the node's GPUs, its other run and its
 * health arrive — and the answer names what was left out.
 */
@Timeout(60)
class RefusedRunIdTest {

    private final RunningCollector collector = RunningCollector.start();

    @AfterEach
    void stop() {
        collector.close();
    }

    @Test
    void aRunWithARefusedIdCostsOnlyThatRun() throws Exception {
        double ts = collector.clock.seconds();
        String[] refused = {"a/b", "a b", "\u00fc", "r".repeat(129), "..", "."};
        StringBuilder runs = new StringBuilder("{\"run_id\":\"good-run\",\"pids\":[1],\"gpu_uuids\":[\"GPU-1\"],"
                + "\"aliases\":[\"x/y\",\"good-alias\"]}");
        for (String id : refused) {
            runs.append(",{\"run_id\":\"").append(id).append("\",\"pids\":[2],\"gpu_uuids\":[\"GPU-0\"]}");
        }
        String body = "{\"host\":\"node-1\",\"agent_id\":\"node-1-abc\",\"seq\":1,"
                + "\"gpus\":[" + gpu(ts, 0) + "," + gpu(ts, 1) + "],"
                + "\"runs\":[" + runs + "],"
                + "\"events\":[{\"ts\":" + ts + ",\"kind\":\"run_ended\",\"run_id\":\"a/b\"}],"
                + "\"run_steps\":[{\"run_id\":\"a b\",\"steps\":[{\"step\":1,\"time_s\":0.5}]}],"
                + "\"health\":{\"poll_seconds\":0.002}}";
        HttpResponse<String> response = collector.postJson("/v1/samples", body.getBytes(StandardCharsets.UTF_8));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode answer = Json.MAPPER.readTree(response.body());
        assertThat(answer.get("gpus").asInt()).isEqualTo(2);
        assertThat(answer.get("runs_refused")).hasSizeGreaterThanOrEqualTo(refused.length);
        assertThat(collector.server.fleet().gpus()).hasSize(2);
        assertThat(collector.server.fleet().runs()).extracting(RunView::runId).containsExactly("good-run");
        assertThat(collector.server.fleet().agents()).singleElement()
                .satisfies(agent -> assertThat(agent.health()).isNotNull());
    }

    private static String gpu(double ts, int index) {
        return "{\"ts\":" + ts + ",\"index\":" + index + ",\"uuid\":\"GPU-" + index + "\",\"name\":\"NVIDIA A100\","
                + "\"memory_total_bytes\":85899345920,\"memory_used_bytes\":1073741824,\"utilization_ratio\":0.5}";
    }
}
