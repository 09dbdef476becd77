package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.trainwatch.agent.log.LogPositions.FileState;
import dev.trainwatch.agent.log.LogPositions.RankStep;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
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

    @Test
    void theFileIsWhatTheWireCodecWroteAndReadsBack() throws Exception {
        byte[] written = LogPositions.toJson(STATES);

        assertThat(new String(written, StandardCharsets.UTF_8))
                .isEqualTo(new String(Json.MAPPER.writeValueAsBytes(STATES), StandardCharsets.UTF_8));
        assertThat(LogPositions.parse(written)).isEqualTo(STATES);
        assertThat(Json.MAPPER.readValue(written, new TypeReference<List<FileState>>() { })).isEqualTo(STATES);
    }

    @Test
    void unknownFieldsAreSkippedAndMissingOnesTakeTheirDefaults() throws Exception {
        String json = "[{\"file_key\":\"k\",\"extra\":{\"a\":[1,2]},\"position\":5},null]";

        List<FileState> parsed = LogPositions.parse(json.getBytes(StandardCharsets.UTF_8));

        assertThat(parsed).containsExactly(new FileState("k", null, null, 5, false, 0, null, 0), null);
    }

    @Test
    void aBrokenFileIsRefusedAndLoadsAsAnEmptyStart(@TempDir Path dir) throws Exception {
        for (String bad : List.of("", "{}", "[{\"position\":\"x\"}]", "[{\"file_key\":\"k\"}] [", "[{\"file_key\":")) {
            assertThatThrownBy(() -> LogPositions.parse(bad.getBytes(StandardCharsets.UTF_8))).as(bad)
                    .isInstanceOf(IOException.class);
            Files.writeString(dir.resolve(LogPositions.FILE_NAME), bad);
            assertThat(new LogPositions(dir).load()).as(bad).isEmpty();
        }
    }

    @Test
    void savedStatesLoadBack(@TempDir Path dir) {
        LogPositions positions = new LogPositions(dir);
        assertThat(positions.save(STATES)).isTrue();

        assertThat(new LogPositions(dir).load()).isEqualTo(STATES);
    }
}
