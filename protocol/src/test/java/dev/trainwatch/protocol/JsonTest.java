package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.protocol.wire.WireCodec;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void aDivergedLossIsCarriedAsNaNAndInfinityAndPythonsBareTokensAreRead() throws JsonProcessingException {
        StepEvent diverged = new StepEvent(120L, 1.4, null, null, null, null, 20, null, Double.NaN, 1e-4,
                Double.POSITIVE_INFINITY, null, null, null, 1.8e9, null);
        String json = Json.MAPPER.writeValueAsString(diverged);
        assertThat(json).contains("\"loss\":\"NaN\"").contains("\"grad_norm\":\"Infinity\"");
        StepEvent back = Json.MAPPER.readValue(json, StepEvent.class);
        assertThat(back.loss()).isNaN();
        assertThat(back.gradNorm()).isInfinite().isPositive();
        // What Python's json.dumps writes for float("nan") and float("-inf").
        StepEvent python = Json.MAPPER.readValue("{\"step\":7,\"time_s\":1.0,\"loss\":NaN,\"grad_norm\":-Infinity}",
                StepEvent.class);
        assertThat(python.loss()).isNaN();
        assertThat(python.gradNorm()).isInfinite().isNegative();
        assertThat(Json.MAPPER.readValue("{\"step\":7,\"time_s\":1.0,\"loss\":0.25}", StepEvent.class).loss())
                .isEqualTo(0.25);
    }

    @Test
    void stepEventUsesTheContractsSnakeCaseNames() throws Exception {
        StepEvent step = new StepEvent(120L, 1.25, 0.8, null, null, null, 10, null, 0.1234, null, null, 64, 64, null,
                1_700_000_000.0, null);
        String json = Json.MAPPER.writeValueAsString(step);
        assertThat(json).contains("\"time_s\":1.25", "\"data_time_s\":0.8", "\"interval_steps\":10",
                "\"bucket_height\":64").doesNotContain("model_time_s");
        assertThat(Json.MAPPER.readValue(json, StepEvent.class)).isEqualTo(step);
    }

    @Test
    void agentBatchRoundTripsAndIgnoresUnknownFields() throws Exception {
        GpuSample gpu = new GpuSample(1.5, 0, "GPU-1", "NVIDIA A100-SXM4-80GB", "00000000:07:00.0",
                85_899_345_920L, 40_000_000_000L, null, null, 0.97, null,
                new UtilizationWindow(6, 0.0, 0.8, 1.0, 0.17, 0.5, 1.5),
                1_410_000_000L, 1_410_000_000L, null, null, List.of("sw_power_cap"), 350.0, 400.0, null, 61.0, 0,
                List.of(new GpuProcess(4242, 39_000_000_000L, null, null)), null, null);
        AgentBatch batch = new AgentBatch("node1", "node1-ab12", 7, List.of(gpu),
                List.of(new RunAttribution("run-1", List.of(4242L), List.of("GPU-1"), List.of(), null, false, null, null, null, null, null)),
                List.of(AgentEvent.xid(1.5, "GPU-1", 79)), new AgentHealth(0.002, 0L, 0L, 0L, 0L, 1.0), null, null, null);
        String json = Json.MAPPER.writeValueAsString(batch);
        assertThat(json).contains("\"memory_total_bytes\":85899345920", "\"utilization_ratio\":0.97",
                "\"clock_event_reasons\":[\"sw_power_cap\"]", "\"used_memory_bytes\":39000000000",
                "\"agent_id\":\"node1-ab12\"", "\"gpu_uuids\":[\"GPU-1\"]");
        assertThat(json).doesNotContain("memory_reserved_bytes");
        String withExtra = json.replaceFirst("\\{", "{\"from_the_future\":[1,2,3],");
        assertThat(Json.MAPPER.readValue(withExtra, AgentBatch.class)).isEqualTo(batch);
    }

    @Test
    void trailingGarbageIsRefused() throws JsonProcessingException {
        // NaN parses (a diverged loss is a reading); which fields may hold it is the collector's validation.
        assertThat(Json.MAPPER.readValue("{\"step\":1,\"time_s\":NaN}", StepEvent.class).timeS()).isNaN();
        assertThatThrownBy(() -> Json.MAPPER.readValue("{\"step\":1} {}", StepEvent.class))
                .isInstanceOf(JsonProcessingException.class);
    }

    @Test
    void flagsOverrideAConfigFileField() {
        RunSpec fromFile = new RunSpec("pixart-sigma-xl-2", null, null, 12, 1024, null, null, null, "fp16", "came",
                true, null, "online", null, null, null, null);
        RunSpec flags = new RunSpec(null, "a800-80gb", null, 20, null, null, null, null, null, null, null, null,
                null, null, null, null, null);
        RunSpec merged = fromFile.overriddenBy(flags);
        assertThat(merged.batch()).isEqualTo(20);
        assertThat(merged.gpu()).isEqualTo("a800-80gb");
        assertThat(merged.optimizer()).isEqualTo("came");
        assertThat(merged.resolution()).isEqualTo(1024);
    }

    @Test
    void theTrainerFieldsTravelBothWaysAndAnOlderSpecStillReads() throws Exception {
        RunSpec flux = RunSpec.empty().withTrainer("fp8", 18).onHardware("rtx4090", 1, 1);
        String json = Json.MAPPER.writeValueAsString(flux);
        assertThat(json).contains("\"base_weights\":\"fp8\"", "\"blocks_to_swap\":18");
        assertThat(Json.MAPPER.readValue(json, RunSpec.class)).isEqualTo(flux);
        // The generated codec agrees with Jackson on the new fields.
        assertThat(Json.MAPPER.readValue(WireCodec.toBytes(flux), RunSpec.class)).isEqualTo(flux);
        // A spec written before the fields existed reads with them unsaid.
        RunSpec old = Json.MAPPER.readValue("{\"model\":\"dit-xl-2\",\"gpu\":\"a100-80gb\",\"lora_rank\":16}",
                RunSpec.class);
        assertThat(old.baseWeights()).isNull();
        assertThat(old.blocksToSwap()).isNull();
        assertThat(old.loraRank()).isEqualTo(16);
        // A flag overrides the file's value; an unsaid flag keeps it.
        assertThat(flux.overriddenBy(RunSpec.empty().withTrainer(null, 0)).baseWeights()).isEqualTo("fp8");
        assertThat(flux.overriddenBy(RunSpec.empty().withTrainer(null, 0)).blocksToSwap()).isZero();
    }
}
