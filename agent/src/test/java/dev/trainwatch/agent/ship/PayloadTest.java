package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

class PayloadTest {

    static JsonNode json(Payload payload) throws Exception {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(payload.gzipBody()))) {
            return Json.MAPPER.readTree(in);
        }
    }

    @Test
    void samplesAreGzipSnakeCaseJson() throws Exception {
        AgentBatch batch = new AgentBatch("node1", "node1-abcd", 42, List.of(Samples.gpu(1, 0, 77)), List.of(),
                List.of(), new AgentHealth(0.002, 0L, 3L, 4096L, 0L, 1.0), null, null, null);
        Payload payload = Payload.samples(batch);
        assertThat(payload.method()).isEqualTo("POST");
        assertThat(payload.path()).isEqualTo("/v1/samples");
        JsonNode body = json(payload);
        assertThat(body.get("agent_id").asText()).isEqualTo("node1-abcd");
        assertThat(body.get("seq").asLong()).isEqualTo(42);
        assertThat(body.get("gpus").get(0).get("memory_used_bytes").asLong()).isEqualTo(60_000_000_000L);
        assertThat(body.get("gpus").get(0).get("processes").get(0).get("pid").asLong()).isEqualTo(77);
        assertThat(body.get("gpus").get(0).has("memory_reserved_bytes")).isFalse();
        assertThat(body.get("health").get("spool_depth").asLong()).isEqualTo(3);
    }

    @Test
    void runIdsAreEscapedInPaths() throws Exception {
        Payload steps = Payload.steps("exp 1/ü", List.of(StepEvent.of(10, 1.5, 100)), null);
        assertThat(steps.path()).isEqualTo("/v1/runs/exp%201%2F%C3%BC/steps");
        assertThat(json(steps).isArray()).isTrue();
        assertThat(json(steps).get(0).get("time_s").asDouble()).isEqualTo(1.5);
        assertThat(Payload.runSpec("r-1_x.y~z", dev.trainwatch.protocol.RunSpec.empty()).path())
                .isEqualTo("/v1/runs/r-1_x.y~z");
    }
}
