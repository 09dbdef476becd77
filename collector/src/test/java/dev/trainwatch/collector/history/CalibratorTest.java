package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class CalibratorTest {
    private static final Instant T = Instant.parse("2026-11-22T08:00:00Z");

    @Test
    void oneRunAt1point4MovesMostOfTheWayAndOtherGroupsStayPut() {
        List<CalibrationFactors> factors = Calibrator.factors(List.of(
                new RunOutcome("a", "a100-80gb", "pixart", 2.0, 2.8, 50L, 50L, T)));
        assertThat(factors).singleElement().satisfies(f -> {
            assertThat(f.gpuId()).isEqualTo("a100-80gb");
            assertThat(f.family()).isEqualTo("pixart");
            assertThat(f.stepTimeFactor()).isBetween(1.3, 1.4);
            assertThat(f.memoryFactor()).isCloseTo(1.0, within(1e-9));
        });
    }

    @Test
    void newerRunsWeighMoreAndBrokenRunsAreIgnored() {
        List<CalibrationFactors> factors = Calibrator.factors(List.of(
                new RunOutcome("old", "h100-sxm", "sana", 1.0, 2.0, null, null, T),
                new RunOutcome("hung", "h100-sxm", "sana", 1.0, 40.0, null, null, T.plusSeconds(1)),
                new RunOutcome("new", "h100-sxm", "sana", 1.0, 1.0, null, null, T.plusSeconds(2))));
        CalibrationFactors f = factors.get(0);
        assertThat(f.runs()).isEqualTo(3);
        // geometric mean of 2.0 (weight 0.64) and 1.0 (weight 1) with the prior 1.0 (weight 0.25): below 1.3
        assertThat(f.stepTimeFactor()).isCloseTo(Math.exp(0.64 * Math.log(2) / 1.89), within(1e-9));
    }
}
