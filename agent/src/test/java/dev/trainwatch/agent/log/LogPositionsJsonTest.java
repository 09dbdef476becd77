package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.trainwatch.agent.log.LogPositions.FileState;
import dev.trainwatch.agent.log.LogPositions.RankStep;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.testing.LogCapture;
import dev.trainwatch.protocol.wire.WireCodec;
import io.avaje.json.JsonException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The positions file is written and read without jackson-databind, in the format the wire codec wrote it. */
class LogPositionsJsonTest {

    private static final List<FileState> STATES = List.of(
            new FileState("(dev=803,ino=1234)", "a1b2c3", "/logs/train \"rank\" 0.log", 123_456_789_012L, true, 3,
                    List.of(new RankStep(0, 100, 1_700_000_000.25), new RankStep(7, 99, 0.5)), 1_700_000_000_123L),
            new FileState("(dev=803,ino=99)", null, "/logs/\u00e9t\u00e9.log", 0, false, 0, List.of(), 1L));

    /** {@link #STATES} as the agent before the generated adapters (5ce0f21) wrote it. */
    private static final String EARLIER_FILE = "[{\"file_key\":\"(dev=803,ino=1234)\",\"head\":\"a1b2c3\","
            + "\"path\":\"/logs/train \\\"rank\\\" 0.log\",\"position\":123456789012,\"mid_line\":true,\"stretch\":3,"
            + "\"ranks\":[{\"rank\":0,\"step\":100,\"ts\":1.70000000025E9},{\"rank\":7,\"step\":99,\"ts\":0.5}],"
            + "\"updated\":1700000000123},{\"file_key\":\"(dev=803,ino=99)\",\"path\":\"/logs/\u00e9t\u00e9.log\","
            + "\"position\":0,\"mid_line\":false,\"stretch\":0,\"ranks\":[],\"updated\":1}]";

    @Test
    void theFileIsWhatTheWireCodecWroteAndReadsBack() throws Exception {
        byte[] written = WireCodec.toBytes(STATES);

        assertThat(new String(written, StandardCharsets.UTF_8))
                .isEqualTo(new String(Json.MAPPER.writeValueAsBytes(STATES), StandardCharsets.UTF_8));
        assertThat(LogPositions.parse(written)).isEqualTo(STATES);
        assertThat(Json.MAPPER.readValue(written, new TypeReference<List<FileState>>() { })).isEqualTo(STATES);
    }

    @Test
    void aFileTheEarlierAgentWroteReadsBackAndIsWrittenTheSame(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve(LogPositions.FILE_NAME), EARLIER_FILE);

        assertThat(new LogPositions(dir).load()).isEqualTo(STATES);
        assertThat(new String(WireCodec.toBytes(STATES), StandardCharsets.UTF_8)).isEqualTo(EARLIER_FILE);
    }

    @Test
    void offsetsAndStepsBeyondADoublesPrecisionStayExact() {
        long beyond = (1L << 53) + 1;
        List<FileState> states = List.of(new FileState("k", null, null, beyond, false, 0,
                List.of(new RankStep(0, Long.MAX_VALUE, 1.5)), Long.MAX_VALUE));

        assertThat(LogPositions.parse(WireCodec.toBytes(states))).isEqualTo(states);
    }

    @Test
    void unknownFieldsAreSkippedAndMissingOnesTakeTheirDefaults() {
        String json = "[{\"file_key\":\"k\",\"extra\":{\"a\":[1,2]},\"position\":5},null]";

        List<FileState> parsed = LogPositions.parse(json.getBytes(StandardCharsets.UTF_8));

        assertThat(parsed).containsExactly(new FileState("k", null, null, 5, false, 0, null, 0), null);
    }

    @Test
    void aBrokenFileIsRefusedAndLoadsAsAnEmptyStart(@TempDir Path dir) throws Exception {
        for (String bad : List.of("", "{}", "[{\"position\":\"x\"}]", "[{\"file_key\":\"k\"}] [", "[{\"file_key\":",
                "[{\"file_key\":\"k\",\"ranks\":[null]}]", "[{\"file_key\":5}]", "[{\"mid_line\":\"true\"}]")) {
            assertThatThrownBy(() -> LogPositions.parse(bad.getBytes(StandardCharsets.UTF_8))).as(bad)
                    .isInstanceOf(JsonException.class);
            Files.writeString(dir.resolve(LogPositions.FILE_NAME), bad);
            try (LogCapture log = LogCapture.of(LogPositions.class.getName())) {
                assertThat(new LogPositions(dir).load()).as(bad).isEmpty();
                assertThat(log.messages()).as(bad).singleElement().asString()
                        .startsWith("cannot read " + dir.resolve(LogPositions.FILE_NAME) + " (")
                        .endsWith("); the log's recent past will be read again").doesNotContain("\n");
            }
        }
    }

    @Test
    void savedStatesLoadBack(@TempDir Path dir) {
        LogPositions positions = new LogPositions(dir);
        assertThat(positions.save(STATES)).isTrue();

        assertThat(new LogPositions(dir).load()).isEqualTo(STATES);
    }
}
