package dev.trainwatch.agent.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A run id the collector would refuse is mapped, the same way everywhere, to one it takes. */
@Timeout(10)
class RunIdsTest {

    private static final String TAKEN = "[A-Za-z0-9_.:-]{1,128}";

    @Test
    void refusedIdsAreMappedDeterministicallyAndDistinctly() {
        List<String> refused = List.of("a/b", "a b", "\u00fc", "r".repeat(200), ".", "..", "job/\u00fcber 1");
        for (String id : refused) {
            String mapped = RunIds.safe(id);
            assertThat(mapped).as(id).matches(TAKEN).isNotIn(".", "..").isEqualTo(RunIds.safe(id));
        }
        assertThat(RunIds.safe("a/b")).startsWith("a_b-").isNotEqualTo(RunIds.safe("a b"));
        assertThat(RunIds.safe("..")).startsWith("run-");
        assertThat(RunIds.safe("r".repeat(200))).hasSize(128);
    }

    @Test
    void idsTheCollectorTakesAreKept() {
        for (String id : List.of("abc", "12345", "job.ns", "r".repeat(128), "host:1-2_3")) {
            assertThat(RunIds.safe(id)).isEqualTo(id);
        }
        assertThat(RunIds.safe(null)).isNull();
    }

    @Test
    void theEnvironmentsIdIsMapped() {
        assertThat(RunIds.fromEnvironment(Map.of("TORCHELASTIC_RUN_ID", "team/run 1")))
                .isEqualTo(RunIds.safe("team/run 1")).matches(TAKEN);
        assertThat(RunIds.fromEnvironment(Map.of("SLURM_JOB_ID", "..")))
                .startsWith("run-");
    }
}
