package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** A GPU's hardware activity counters from an agent batch to the run view and /metrics; hostile values refused. */
class GpuActivityApiTest {

    private static final String BATCH = "{\"host\":\"n\",\"agent_id\":\"a\",\"seq\":%d,\"gpus\":[{\"ts\":%s,\"index\":0,"
            + "\"uuid\":\"GPU-h100\",\"memory_total_bytes\":85899345920,\"memory_used_bytes\":60000000000,"
            + "\"utilization_ratio\":0.97,\"activity\":{%s}}],"
            + "\"runs\":[{\"run_id\":\"r\",\"pids\":[1],\"gpu_uuids\":[\"GPU-h100\"]}]}";

    @Test
    void theCountersReachTheRunsGpusAndTheMetrics() throws Exception {
        try (RunningCollector c = RunningCollector.start()) {
            for (int i = 1; i <= 3; i++) {
                c.clock.advanceSeconds(1);
                String activity = String.format(Locale.ROOT, "\"window_seconds\":1.0,\"sm_active_ratio\":0.91,"
                        + "\"tensor_active_ratio\":0.62,\"dram_active_ratio\":0.4,\"pcie_rx_bytes_per_second\":2.0E9,"
                        + "\"nvlink_rx_bytes\":%d,\"nvlink_tx_bytes\":%d", i * 50_000_000_000L, i * 50_000_000_000L);
                assertThat(post(c, i, activity).statusCode()).isEqualTo(200);
            }
            JsonNode gpu = Json.MAPPER.readTree(c.get("/v1/runs/r").body()).path("gpus").get(0);
            assertThat(gpu.path("sm_active_ratio").asDouble()).isEqualTo(0.91, org.assertj.core.data.Offset.offset(1e-6));
            assertThat(gpu.path("tensor_active_ratio").asDouble()).isEqualTo(0.62, org.assertj.core.data.Offset.offset(1e-6));
            // 100 GB more every second, received plus sent
            assertThat(gpu.path("nvlink_bytes_per_second").asDouble()).isCloseTo(1.0e11, org.assertj.core.data.Percentage.withPercentage(1e-4));
            assertThat(Json.MAPPER.readTree(c.get("/v1/runs/r").body()).at("/observed/hardware_mfu_ratio").asDouble())
                    .isEqualTo(0.62, org.assertj.core.data.Offset.offset(1e-6));
            String metrics = c.get("/metrics").body();
            assertThat(metrics).contains("trainwatch_gpu_tensor_active_ratio{gpu=\"0\",gpu_uuid=\"GPU-h100\",host=\"n\"} 0.62")
                    .contains("trainwatch_gpu_nvlink_rx_bytes_total{gpu=\"0\",gpu_uuid=\"GPU-h100\",host=\"n\"} 1.5E11")
                    .contains("trainwatch_run_hardware_mfu_ratio{run_id=\"r\"}");
        }
    }

    @Test
    void hostileCountersGetOneLineErrorsAndNothingIsKept() throws Exception {
        try (RunningCollector c = RunningCollector.start()) {
            String[][] cases = {
                {"\"sm_active_ratio\":1.5", "gpus[0].activity.sm_active_ratio must be between 0 and 1"},
                {"\"tensor_active_ratio\":-0.1", "gpus[0].activity.tensor_active_ratio must be between 0 and 1"},
                {"\"pcie_rx_bytes_per_second\":1e20", "gpus[0].activity.pcie_rx_bytes_per_second must be between 0 and"},
                {"\"nvlink_tx_bytes\":-5", "gpus[0].activity.nvlink_tx_bytes must be between 0 and"},
                {"\"dram_active_ratio\":\"NaN\"", "gpus[0].activity.dram_active_ratio must be a finite number"},
            };
            int seq = 1;
            for (String[] k : cases) {
                var r = post(c, seq++, k[0]);
                assertThat(r.statusCode()).as(k[0]).isEqualTo(422);
                assertThat(Json.MAPPER.readTree(r.body()).path("error").asText()).as(k[0]).contains(k[1])
                        .doesNotContain("\n");
            }
            assertThat(c.get("/v1/runs/r").statusCode()).isEqualTo(404);
        }
    }

    private static java.net.http.HttpResponse<String> post(RunningCollector c, int seq, String activity) throws Exception {
        return c.postJson("/v1/samples", String.format(Locale.ROOT, BATCH, seq, c.clock.seconds(), activity)
                .getBytes(StandardCharsets.UTF_8));
    }
}
