package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A node's memory and its ranks' processes, from an agent batch to the run view and /metrics. */
class HostAndRankProcessesTest {

    private static final long GIB = 1L << 30;

    @Test
    void theNodesMemoryAndEachRanksProcessReachTheApiAndTheMetrics() throws Exception {
        try (RunningCollector c = RunningCollector.start()) {
            for (int i = 0; i < 3; i++) {
                c.clock.advanceSeconds(10);
                double t = c.clock.seconds();
                GpuSample gpu = new GpuSample(t, 0, "GPU-0", "NVIDIA A100-SXM4-80GB", null, 80 * GIB, 40 * GIB, null,
                        40 * GIB, 0.95, null, null, 1_410_000_000L, 1_410_000_000L, null, null, List.of(), 300.0, 400.0,
                        null, 60.0, 0, List.of(), false, null);
                RankInfo rank = new RankInfo(4101, 0, 0, 1, List.of("GPU-0"), "R", 100.0 + 10 * i, 6 * GIB, 4,
                        9 * GIB, 40.0 + i);
                AgentBatch b = new AgentBatch("node7", "agent-7", i + 1, List.of(gpu),
                        List.of(new RunAttribution("r", List.of(4101L), List.of("GPU-0"), List.of(rank), null, false, null, null, null, null, null)),
                        List.of(), new AgentHealth(0.001, 0L, 0L, 0L, 0L, 1.0),
                        new HostMemory(t, 512 * GIB, 300 * GIB - i * GIB, 0L, 64 * GIB, 3 * GIB), null, null);
                assertThat(c.postJson("/v1/samples", Json.MAPPER.writeValueAsBytes(b)).statusCode()).isEqualTo(200);
            }
            JsonNode run = Json.MAPPER.readTree(c.get("/v1/runs/r").body());
            JsonNode host = run.path("host_memory").get(0);
            assertThat(host.path("host").asText()).isEqualTo("node7");
            assertThat(host.path("mem_available_bytes").asLong()).isEqualTo(298 * GIB);
            assertThat(host.path("shm_used_bytes").asLong()).isEqualTo(3 * GIB);
            JsonNode process = run.path("gpus").get(0).path("process");
            assertThat(process.path("rank").asInt()).isZero();
            assertThat(process.path("state").asText()).isEqualTo("R");
            assertThat(process.path("cpu_ratio").asDouble()).isEqualTo(1.0); // 10 CPU-seconds every 10 s
            assertThat(process.path("workers").asInt()).isEqualTo(4);
            assertThat(process.path("workers_rss_bytes").asLong()).isEqualTo(9 * GIB);
            String metrics = c.get("/metrics").body();
            assertThat(metrics).contains("trainwatch_host_memory_available_bytes{host=\"node7\"} 3.19975063552E11")
                    .contains("trainwatch_host_shm_total_bytes{host=\"node7\"} 6.8719476736E10");
        }
    }

    @Test
    void hostileProcessFailureAndMemoryFieldsGetOneLineErrors() throws Exception {
        try (RunningCollector c = RunningCollector.start()) {
            double t = c.clock.seconds();
            String base = "{\"host\":\"n\",\"agent_id\":\"a\",\"seq\":%d,%s}";
            String[][] cases = {
                {"\"runs\":[{\"run_id\":\"r\",\"ranks\":[{\"pid\":1,\"rank\":0,\"cpu_seconds\":-5}]}]",
                    "runs[0].ranks[0].cpu_seconds must be between 0 and"},
                {"\"host_memory\":{\"ts\":" + t + ",\"mem_available_bytes\":-1}",
                    "host_memory.mem_available_bytes must be between 0 and"},
                {"\"events\":[{\"ts\":" + t + ",\"kind\":\"run_failed\",\"run_id\":\"r\",\"failure\":{\"cause\":"
                        + "\"bad_luck\"}}]", "events[0].failure.cause must be one of cuda_oom, exception,"},
                {"\"events\":[{\"ts\":" + t + ",\"kind\":\"run_failed\",\"run_id\":\"r\",\"failure\":{\"cause\":"
                        + "\"exception\",\"lines\":[" + "\"x\",".repeat(60) + "\"x\"]}}]",
                    "events[0].failure.lines has 61 entries"},
            };
            int seq = 1;
            for (String[] k : cases) {
                var r = c.postJson("/v1/samples", String.format(java.util.Locale.ROOT, base, seq++, k[0])
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
                assertThat(r.statusCode()).as(k[0]).isEqualTo(422);
                assertThat(Json.MAPPER.readTree(r.body()).path("error").asText()).as(k[0]).contains(k[1])
                        .doesNotContain("\n");
            }
            // Nothing of the refused batches was kept.
            assertThat(c.get("/v1/runs/r").statusCode()).isEqualTo(404);
        }
    }
}
