package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.wire.WireCodec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The codec generated from the records ({@link WireCodec}) against the reference, databind's {@link Json#MAPPER}: it
 * writes the mapper's bytes, and what it writes the mapper reads as the same record, so the wire is unchanged.
 */
class WireCodecTest {

    private static final Map<String, Class<? extends Record>> RECORDS = Map.of(
            "agent-batch", AgentBatch.class, "step-event", StepEvent.class, "run-spec", RunSpec.class);

    @ParameterizedTest
    @ValueSource(strings = {"agent-batch", "step-event", "run-spec"})
    void theGoldenExampleIsWrittenAsTheMapperWritesItAndReadsBackToTheSameRecord(String name) throws Exception {
        Class<? extends Record> type = RECORDS.get(name);
        String golden = Files.readString(Path.of("src/test/resources/wire/" + name + ".json"), StandardCharsets.UTF_8);
        Record record = Json.MAPPER.readValue(golden, type);

        byte[] written = WireCodec.toBytes(record);

        assertThat(new String(written, StandardCharsets.UTF_8))
                .isEqualTo(new String(Json.MAPPER.writeValueAsBytes(record), StandardCharsets.UTF_8));
        assertThat(Json.MAPPER.readValue(written, type)).isEqualTo(record);
        assertThat(Json.MAPPER.readTree(written)).isEqualTo(Json.MAPPER.readTree(golden));
    }

    @Test
    void everyRecordWithEveryFieldSetIsWrittenAsTheMapperWritesIt() throws Exception {
        for (Class<? extends Record> type : List.of(AgentBatch.class, StepEvent.class, RunSpec.class)) {
            Object example = WireSchemaTest.example(type, 0);
            byte[] written = WireCodec.toBytes(example);
            assertThat(written).as(type.getSimpleName()).isEqualTo(Json.MAPPER.writeValueAsBytes(example));
            assertThat(Json.MAPPER.readValue(written, type)).as(type.getSimpleName()).isEqualTo(example);
        }
    }

    @Test
    void aListOfStepsAnEmptyBatchAndABatchOfNullsAreWrittenAsTheMapperWritesThem() throws Exception {
        List<StepEvent> steps = List.of(StepEvent.of(1, 0.5, 100.25),
                Samples.withSource(StepEvent.of(2, 0.75, 101.0), "log"));
        assertThat(WireCodec.toBytes(steps)).isEqualTo(Json.MAPPER.writeValueAsBytes(steps));
        assertThat(WireCodec.toBytes(List.of())).isEqualTo(Json.MAPPER.writeValueAsBytes(List.of()));
        AgentBatch empty = new AgentBatch("h", "a", 0, List.of(), List.of(), List.of(), null, null, null, null);
        assertThat(WireCodec.toBytes(empty)).isEqualTo(Json.MAPPER.writeValueAsBytes(empty));
        AgentBatch nulls = new AgentBatch(null, null, -1, null, null, null, null, null, null, null);
        assertThat(WireCodec.toBytes(nulls)).isEqualTo(Json.MAPPER.writeValueAsBytes(nulls));
    }

    /** The processor matches constructors by the components' distinct types; the batch's steps must still travel. */
    @Test
    void aBatchsStepsTravel() throws Exception {
        AgentBatch batch = new AgentBatch("h", "a", 3, List.of(), List.of(), List.of(), null, null, 1.7e9,
                List.of(new RunSteps("run-1", List.of(StepEvent.of(5, 0.5, 1.7e9)))));
        assertThat(WireCodec.toBytes(batch)).isEqualTo(Json.MAPPER.writeValueAsBytes(batch));
        assertThat(WireCodec.type(AgentBatch.class).fromJson(WireCodec.toBytes(batch)).runSteps())
                .isEqualTo(batch.runSteps());
    }

    /**
     * Jackson escapes a character outside the Basic Multilingual Plane as its surrogate pair ({@code \uD83D\uDE80});
     * the generated writer sends its four UTF-8 bytes. Both are the same string to every JSON reader.
     */
    @Test
    void stringsReadBackAsTheyWere() throws Exception {
        StringBuilder all = new StringBuilder();
        for (char c = 0; c < 0x100; c++) {
            all.append(c);
        }
        all.append('\u07ff').append('\u0800').append('\u2028').append('\ufeff').append('\uffff')
                .append("\uD83D\uDE80 emoji, \u00e9t\u00e9, \u4e2d\u6587, \"quoted\" \\back\\ /slash/");
        for (String s : List.of("", "plain", all.toString())) {
            AgentEvent event = new AgentEvent(1.0, "phase", s, null, s, s, null, null, null, null);
            assertThat(Json.MAPPER.readValue(WireCodec.toBytes(event), AgentEvent.class)).as(s).isEqualTo(event);
            assertThat(Json.MAPPER.readTree(WireCodec.toBytes(event)))
                    .isEqualTo(Json.MAPPER.readTree(Json.MAPPER.writeValueAsBytes(event)));
        }
        AgentEvent bmp = new AgentEvent(1.0, "phase", all.substring(0, 0x100 + 5), null, null, "\u00e9t\u00e9 \u4e2d", null, null, null, null);
        assertThat(WireCodec.toBytes(bmp)).isEqualTo(Json.MAPPER.writeValueAsBytes(bmp));
    }

    @Test
    void numbersAreWrittenAsTheMapperWritesThem() throws Exception {
        double[] doubles = {0.0, -0.0, 1.0, 1.5, -2.25, 0.1, 1e-7, 1.0e-3, 123456789.0, 1e7, 1.0e21,
            9.999999999999999e22, 1.7e9, 1_700_000_000.123, Double.MIN_VALUE, Double.MAX_VALUE, Math.PI, Double.NaN,
            Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
        long[] longs = {0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, Integer.MAX_VALUE, 85899345920L};
        for (double d : doubles) {
            HostMemory m = new HostMemory(d, 1L, null, 0L, null, null);
            StepEvent s = new StepEvent(3L, d, d, null, null, null, 1, d, d, d, d, null, null, 0, d, null);
            assertThat(WireCodec.toBytes(m)).as("%s", d).isEqualTo(Json.MAPPER.writeValueAsBytes(m));
            assertThat(WireCodec.toBytes(s)).as("%s", d).isEqualTo(Json.MAPPER.writeValueAsBytes(s));
            assertThat(Json.MAPPER.readValue(WireCodec.toBytes(s), StepEvent.class)).as("%s", d).isEqualTo(s);
        }
        Random random = new Random(41);
        for (int i = 0; i < 20_000; i++) {
            double d = i % 2 == 0 ? random.nextDouble() : Double.longBitsToDouble(random.nextLong());
            HostMemory m = new HostMemory(d, null, null, null, null, null);
            assertThat(WireCodec.toBytes(m)).as("%s", d).isEqualTo(Json.MAPPER.writeValueAsBytes(m));
        }
        for (long l : longs) {
            GpuProcess p = new GpuProcess(l, l, 0.5, null);
            assertThat(WireCodec.toBytes(p)).as("%s", l).isEqualTo(Json.MAPPER.writeValueAsBytes(p));
        }
    }

    @Test
    void aFailuresDetailMapLeavesNullValuesOutAsTheMapperDoes() throws Exception {
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("xid", 79);
        detail.put("tried_to_allocate_bytes", 2147483648L);
        detail.put("fraction", 0.25);
        detail.put("gone", null);
        detail.put("name", "SIGKILL");
        detail.put("flag", Boolean.TRUE);
        detail.put("list", List.of(1, "x"));
        detail.put("nested", Map.of("a", 1));
        List<String> lines = new ArrayList<>(List.of("line one", "line\ttwo"));
        RunFailure failure = new RunFailure("cuda_oom", "out of memory", 1, null, 3, detail, lines);
        AgentEvent event = new AgentEvent(12.5, "run_failed", null, null, "run-1", "failed", failure,
                new RunEnding("/logs/x.log", true, "last", List.of("/out")), null, null);
        assertThat(new String(WireCodec.toBytes(event), StandardCharsets.UTF_8))
                .isEqualTo(new String(Json.MAPPER.writeValueAsBytes(event), StandardCharsets.UTF_8));
        JsonNode written = Json.MAPPER.readTree(WireCodec.toBytes(event));
        assertThat(written.get("failure").get("detail").has("gone")).isFalse();
    }
}
