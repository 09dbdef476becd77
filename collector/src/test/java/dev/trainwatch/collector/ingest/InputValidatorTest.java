package dev.trainwatch.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import dev.trainwatch.collector.bench.HttpFleetLoad;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each numeric field of a reading, a rank, a step and the health, broken one at a time: the batch is refused with a
 * message naming that field by its full path ({@code gpus[1].activity.dram_active_ratio}), as the rules built it
 * before they stopped making a path object for every valid field.
 */
class InputValidatorTest {

    private static final InputValidator VALIDATOR = new InputValidator(CollectorConfig.Limits.defaults());
    private static final PropertyNamingStrategies.NamingBase SNAKE =
            (PropertyNamingStrategies.NamingBase) PropertyNamingStrategies.SNAKE_CASE;

    private static List<GpuSample> readings() {
        List<String> uuids = List.of("GPU-a", "GPU-b");
        return HttpFleetLoad.samples(uuids, 1.7e9, 100, 85_899_345_920L);
    }

    private static RunAttribution run() {
        RankInfo rank = new RankInfo(10_000L, 0, 0, 2, List.of("GPU-a"), "R", 12.5, 1L << 30, 4, 1L << 31, 3.0);
        return new RunAttribution("run-1", List.of(10_000L), List.of("GPU-a", "GPU-b"), List.of(rank), "10.0.0.1",
                null, null, null, null, null, null);
    }

    private static AgentBatch batch(List<GpuSample> gpus, RunAttribution run, AgentHealth health,
                                    List<StepEvent> steps) {
        return new AgentBatch("node-1", "agent-1", 7, gpus, List.of(run), List.of(), health, null, 1.7e9,
                List.of(new RunSteps("run-1", steps)));
    }

    private static AgentHealth health() {
        return new AgentHealth(0.004, 0L, 0L, 0L, 0L, 1.0);
    }

    private static List<StepEvent> steps() {
        return List.of(new StepEvent(5L, 0.9, 0.05, 0.6, 0.1, 0.1, 8, 256.0, 0.12, 1e-4, 1.1, 256, 256, 0, 1.7e9, null));
    }

    @Test
    void aValidBatchPasses() {
        AgentBatch ok = batch(readings(), run(), health(), steps());
        assertThatCode(() -> VALIDATOR.check(ok)).doesNotThrowAnyException();
        assertThatCode(() -> VALIDATOR.checkSteps(ok)).doesNotThrowAnyException();
    }

    @Test
    void aSpecsNotesAreBoundedInCountAndLength() {
        RunSpec noted = RunSpec.empty().withNotes(List.of("dataset TOML dataset.toml not readable: permission denied"));
        assertThatCode(() -> VALIDATOR.check(noted)).doesNotThrowAnyException();
        ApiError many = catchThrowableOfType(() -> VALIDATOR.check(RunSpec.empty().withNotes(
                Collections.nCopies(33, "n"))), ApiError.class);
        assertThat(many.getMessage()).isEqualTo("notes has 33 entries, more than 32");
        ApiError longOne = catchThrowableOfType(() -> VALIDATOR.check(RunSpec.empty().withNotes(List.of("x".repeat(501)))),
                ApiError.class);
        assertThat(longOne.getMessage()).isEqualTo("notes[] is longer than 500 characters");
    }

    @Test
    void everyNumberOfAReadingIsNamedByItsPathWhenBroken() throws Exception {
        RecordComponent[] sample = GpuSample.class.getRecordComponents();
        int checked = breakEach(GpuSample.class, 1, "", (g, c, bad) -> with(g, c, bad))
                + breakEach(GpuActivity.class, 1, "activity.",
                        (g, c, bad) -> with(g, sample[24], with(g.activity(), c, bad)))
                + breakEach(UtilizationWindow.class, 0, "utilization_window.",
                        (g, c, bad) -> with(g, sample[11], with(g.utilizationWindow(), c, bad)))
                + breakEach(GpuProcess.class, 1, "processes[0].",
                        (g, c, bad) -> with(g, sample[22], List.of(with(g.processes().get(0), c, bad))));
        assertThat(checked).as("numeric fields broken").isEqualTo(40);
    }

    /** Puts a broken value into one field of a reading (of the reading or of a record it holds). */
    private interface Breaking {
        GpuSample apply(GpuSample reading, RecordComponent field, Object bad) throws Exception;
    }

    /**
     * Breaks each numeric field of {@code type} in turn in reading {@code index} of a valid batch and checks the
     * refusal names {@code gpus[index].} + {@code within} + the field's wire name; the number of fields broken.
     */
    private static int breakEach(Class<? extends Record> type, int index, String within, Breaking breaking)
            throws Exception {
        int broken = 0;
        for (RecordComponent c : type.getRecordComponents()) {
            Object bad = outOfEveryRange(c.getType());
            if (bad == null) {
                continue;
            }
            List<GpuSample> gpus = new ArrayList<>(readings());
            gpus.set(index, breaking.apply(gpus.get(index), c, bad));
            assertThat(refusal(batch(gpus, run(), health(), steps())))
                    .startsWith("gpus[" + index + "]." + within + SNAKE.translate(c.getName()) + " ");
            broken++;
        }
        return broken;
    }

    @Test
    void ranksHealthAndStepsAreNamedByTheirPathsWhenBroken() throws Exception {
        for (RecordComponent c : RankInfo.class.getRecordComponents()) {
            Object bad = outOfEveryRange(c.getType());
            if (bad == null) {
                continue;
            }
            RunAttribution run = run();
            RunAttribution broken = with(run, RunAttribution.class.getRecordComponents()[3],
                    List.of(with(run.ranks().get(0), c, bad)));
            assertThat(refusal(batch(readings(), broken, health(), steps())))
                    .startsWith("runs[0].ranks[0]." + SNAKE.translate(c.getName()) + " ");
        }
        for (RecordComponent c : AgentHealth.class.getRecordComponents()) {
            Object bad = outOfEveryRange(c.getType());
            if (bad == null) {
                continue;
            }
            assertThat(refusal(batch(readings(), run(), with(health(), c, bad), steps())))
                    .startsWith("health." + SNAKE.translate(c.getName()) + " ");
        }
        for (RecordComponent c : StepEvent.class.getRecordComponents()) {
            Object bad = outOfEveryRange(c.getType());
            if (bad == null || c.getName().equals("loss") || c.getName().equals("gradNorm")) {
                continue; // a non-finite loss or grad norm is a reading, not an error
            }
            List<StepEvent> steps = new ArrayList<>(steps());
            steps.add(with(steps.get(0), c, bad));
            AgentBatch b = batch(readings(), run(), health(), steps);
            ApiError error = catchThrowableOfType(() -> VALIDATOR.checkSteps(b), ApiError.class);
            assertThat(error).as(c.getName()).isNotNull();
            assertThat(error.getMessage()).startsWith("run_steps[0].steps[1]." + SNAKE.translate(c.getName()) + " ");
        }
    }

    @Test
    void labelsAndTextsAreNamedByTheirPathsWhenBroken() throws Exception {
        List<GpuSample> gpus = new ArrayList<>(readings());
        RecordComponent[] fields = GpuSample.class.getRecordComponents();
        gpus.set(1, with(gpus.get(1), fields[2], "GPU with spaces"));
        assertThat(refusal(batch(gpus, run(), health(), steps())))
                .isEqualTo("gpus[1].uuid must be printable ASCII without spaces, quotes or backslashes");
        gpus.set(1, with(readings().get(1), fields[2], "G".repeat(129)));
        assertThat(refusal(batch(gpus, run(), health(), steps())))
                .isEqualTo("gpus[1].uuid is longer than 128 characters");
        gpus.set(1, with(readings().get(1), fields[2], ""));
        assertThat(refusal(batch(gpus, run(), health(), steps()))).isEqualTo("gpus[1].uuid is missing");
        gpus.set(1, with(readings().get(1), fields[3], "N".repeat(257)));
        assertThat(refusal(batch(gpus, run(), health(), steps())))
                .isEqualTo("gpus[1].name is longer than 256 characters");
        RunAttribution run = run();
        RunAttribution far = with(run, RunAttribution.class.getRecordComponents()[4], "m".repeat(257));
        assertThat(refusal(batch(readings(), far, health(), steps())))
                .isEqualTo("runs[0].master_addr is longer than 256 characters");
    }

    /** A value outside every range the rules allow for a field of this type, or null for a type without one. */
    private static Object outOfEveryRange(Class<?> type) {
        if (type == Double.class || type == double.class) {
            return Double.NaN;
        }
        if (type == Long.class || type == long.class) {
            return Long.MIN_VALUE;
        }
        if (type == Integer.class || type == int.class) {
            return Integer.MIN_VALUE;
        }
        return null;
    }

    private static String refusal(AgentBatch batch) {
        ApiError error = catchThrowableOfType(() -> VALIDATOR.check(batch), ApiError.class);
        assertThat(error).isNotNull();
        assertThat(error.status()).isEqualTo(ApiError.UNPROCESSABLE);
        return error.getMessage();
    }

    /** A copy of {@code record} with {@code field} set to {@code value}. */
    @SuppressWarnings("unchecked")
    private static <R extends Record> R with(R record, RecordComponent field, Object value) throws Exception {
        RecordComponent[] all = record.getClass().getRecordComponents();
        Object[] args = new Object[all.length];
        Class<?>[] types = new Class<?>[all.length];
        for (int i = 0; i < all.length; i++) {
            types[i] = all[i].getType();
            args[i] = all[i].getName().equals(field.getName()) ? value : all[i].getAccessor().invoke(record);
        }
        return (R) record.getClass().getDeclaredConstructor(types).newInstance(args);
    }
}
