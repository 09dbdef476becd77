package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two nodes started from one cloned image share an agent id: every batch of both is applied (none is taken for the
 * other's replay), both nodes are seen, and each node's answers tell it so.
 */
@Timeout(60)
class ClonedAgentIdTest {

    private final RunningCollector collector = RunningCollector.start();

    @AfterEach
    void stop() {
        collector.close();
    }

    @Test
    void bothNodesOfAClonedIdAreSeenAndBothAreTold() throws Exception {
        int duplicates = 0;
        JsonNode lastOfFirst = null;
        JsonNode lastOfSecond = null;
        for (long seq = 1; seq <= 36; seq++) {
            collector.clock.advanceSeconds(1);
            JsonNode first = post("node-a", "GPU-a", seq);
            JsonNode second = post("node-b", "GPU-b", seq + 3);
            duplicates += (first.get("duplicate").asBoolean() ? 1 : 0) + (second.get("duplicate").asBoolean() ? 1 : 0);
            lastOfFirst = first;
            lastOfSecond = second;
        }
        assertThat(duplicates).isZero();
        assertThat(collector.server.fleet().agents()).extracting(AgentView::host)
                .containsExactlyInAnyOrder("node-a", "node-b");
        assertThat(collector.server.fleet().agents()).allSatisfy(a -> assertThat(a.batches()).isEqualTo(36));
        assertThat(collector.server.fleet().gpus()).hasSize(2);
        assertThat(lastOfFirst.get("agent_id_clash").asText()).contains("cloned-1", "node-b");
        assertThat(lastOfSecond.get("agent_id_clash").asText()).contains("cloned-1", "node-a");
    }

    private JsonNode post(String host, String uuid, long seq) throws Exception {
        double ts = collector.clock.seconds();
        String body = "{\"host\":\"" + host + "\",\"agent_id\":\"cloned-1\",\"seq\":" + seq + ",\"gpus\":[{\"ts\":" + ts
                + ",\"index\":0,\"uuid\":\"" + uuid + "\",\"name\":\"NVIDIA A100\",\"memory_total_bytes\":85899345920,"
                + "\"memory_used_bytes\":1073741824,\"utilization_ratio\":0.5}]}";
        HttpResponse<String> response = collector.postJson("/v1/samples", body.getBytes(StandardCharsets.UTF_8));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return Json.MAPPER.readTree(response.body());
    }
}
