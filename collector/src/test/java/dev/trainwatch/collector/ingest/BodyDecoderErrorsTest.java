package dev.trainwatch.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.protocol.AgentBatch;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Each way databind can refuse a body, and the validator's null entries, as the one line and status a client is
 * answered: what {@code PlainRecordReaderTest} checked against databind before the plain reader was removed.
 */
class BodyDecoderErrorsTest {

    private static final BodyDecoder DECODER = new BodyDecoder(1 << 20);
    private static final InputValidator VALIDATOR = new InputValidator(CollectorConfig.Limits.defaults());
    private static final String HEAD = "{\"host\":\"node-1\",\"agent_id\":\"a-1\",\"seq\":1,";

    private static ApiError batchError(String json) {
        return catchThrowableOfType(() -> DECODER.batch(json.getBytes(StandardCharsets.UTF_8), null), ApiError.class);
    }

    private static ApiError stepsError(String json) {
        return catchThrowableOfType(() -> DECODER.steps(json.getBytes(StandardCharsets.UTF_8), null), ApiError.class);
    }

    private static ApiError validationError(String json) {
        return catchThrowableOfType(() -> {
            AgentBatch batch = DECODER.batch(json.getBytes(StandardCharsets.UTF_8), null);
            VALIDATOR.check(batch);
            VALIDATOR.checkSteps(batch);
        }, ApiError.class);
    }

    @Test
    void eachDecodingFailureIsOneLineWithItsStatus() {
        // databind wraps the parser's range error with the field's path
        ApiError range = batchError("{\"seq\": 99999999999999999999}");
        assertThat(range.status()).isEqualTo(ApiError.BAD_REQUEST);
        assertThat(range.getMessage()).isEqualTo("cannot read seq at line 1, column 29: Numeric value"
                + " (99999999999999999999) out of range of long (-9223372036854775808 - 9223372036854775807)");

        ApiError nan = batchError("{\"seq\": NaN}");
        assertThat(nan.status()).isEqualTo(ApiError.BAD_REQUEST);
        assertThat(nan.getMessage()).startsWith("wrong type for seq at line 1, column ")
                .endsWith(": expected an integer");

        assertThat(batchError("{\"seq\": \"x\"}").getMessage()).startsWith("wrong type for seq at line 1")
                .endsWith(": expected an integer");
        assertThat(batchError("[1]").getMessage()).startsWith("wrong JSON type at line 1")
                .endsWith(": expected an object");
        assertThat(batchError("{\"seq\": ").getMessage()).startsWith("malformed JSON at line 1, column ");
        assertThat(batchError("{\"seq\": " + "1".repeat(1_001) + "}").getMessage()).startsWith("body refused");
        assertThat(batchError(" \n").getMessage()).isEqualTo("empty body: expected an agent batch object");
        assertThat(batchError("null").getMessage()).isEqualTo("body is null: expected an agent batch object");
        assertThat(stepsError("[{\"step\": 1, \"time_s\": 1}, null]").getMessage())
                .isEqualTo("[1] is null: expected a step event object");
        for (String body : new String[] {"{\"seq\": \"x\"}", "{\"seq\": " + "1".repeat(1_001) + "}"}) {
            assertThat(batchError(body).getMessage()).doesNotContain("\n").hasSizeLessThan(260);
        }
    }

    @Test
    void aSpecWithFieldsItDoesNotKnowNamesThem() {
        byte[] json = "{\"model\": \"dit-xl-2\", \"bacth\": 8, \"gpuz\": 2}".getBytes(StandardCharsets.UTF_8);
        ApiError unknown = catchThrowableOfType(() -> DECODER.spec(json), ApiError.class);
        assertThat(unknown.status()).isEqualTo(ApiError.UNPROCESSABLE);
        assertThat(unknown.getMessage()).startsWith("unknown fields 'bacth', 'gpuz' in the run spec; known fields: ")
                .contains("batch");
    }

    @Test
    void aNullEntryIsNamedByItsPath() {
        assertThat(validationError(HEAD + "\"gpus\": [null]}").getMessage()).isEqualTo("gpus[0] is null");
        assertThat(validationError(HEAD + "\"runs\": [{\"run_id\": \"r\", \"pids\": [1, null]}]}").getMessage())
                .isEqualTo("runs[0].pids[1] is null");
        assertThat(validationError(HEAD + "\"run_steps\": [null]}").getMessage()).isEqualTo("run_steps[0] is null");
        String steps = HEAD + "\"run_steps\": [{\"run_id\": \"r\", \"steps\": [{\"step\": 1, \"time_s\": 1}, %s]}]}";
        assertThat(validationError(steps.formatted("null")).getMessage()).isEqualTo("run_steps[0].steps[1] is null");
        assertThat(validationError(steps.formatted("{\"step\": 2, \"time_s\": 0}")).getMessage())
                .startsWith("run_steps[0].steps[1].time_s must be > 0");
        assertThat(validationError(steps.formatted("{\"step\": 2, \"time_s\": 1}"))).isNull();
    }
}
