package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Calibration needs evidence: several runs that agree, robust to an odd one, shrunk and bounded. */
class CalibratorTest {
    private static final Instant T = Instant.parse("2026-11-22T08:00:00Z");

    private static RunOutcome run(String id, double stepRatio, double memRatio, int second) {
        return new RunOutcome(id, "a100-80gb", "pixart", 2.0, 2.0 * stepRatio, 50L, Math.round(50 * memRatio),
                T.plusSeconds(second));
    }

    private static CalibrationFactors only(List<CalibrationFactors> factors) {
        assertThat(factors).hasSize(1);
        return factors.get(0);
    }

    @Test
    void oneOddRunChangesNothing() {
        // The run: its spec said batch 12, it ran 3.5x faster; it used to move the factor to 0.37.
        CalibrationFactors f = only(factors(List.of(run("odd", 0.37, 1.28, 0))));
        assertThat(f.stepTimeFactor()).isEqualTo(1.0);
        assertThat(f.memoryFactor()).isEqualTo(1.0);
        assertThat(f.applied()).isFalse();
        assertThat(f.usedRuns()).containsExactly("odd");
    }

    @Test
    void threeRunsThatAgreeMoveTheFactorShrunkTowardsNoChange() {
        CalibrationFactors f = only(factors(List.of(run("a", 1.4, 1.1, 0), run("b", 1.38, 1.1, 1),
                run("c", 1.42, 1.1, 2))));
        assertThat(f.applied()).isTrue();
        // median 1.4, shrunk as if 2 runs had matched the prediction: 1.4^(3/5)
        assertThat(f.stepTimeFactor()).isCloseTo(Math.pow(1.4, 3.0 / 5), within(1e-9));
        assertThat(f.memoryFactor()).isCloseTo(Math.pow(1.1, 3.0 / 5), within(1e-3));
        assertThat(f.usedRuns()).containsExactly("c", "b", "a");
    }

    @Test
    void anOutlierAmongAgreeingRunsIsLeftOutAndNamed() {
        CalibrationFactors f = only(factors(List.of(run("a", 1.4, 1, 0), run("b", 1.38, 1, 1),
                run("odd", 0.37, 1, 2), run("c", 1.42, 1, 3))));
        assertThat(f.outlierRuns()).containsExactly("odd");
        assertThat(f.usedRuns()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(f.stepTimeFactor()).isCloseTo(Math.pow(1.4, 3.0 / 5), within(1e-9));
        // A normal run after it is predicted as before the odd run, not at 0.37 of it.
    }

    @Test
    void brokenRunsAreIgnoredAndTheFactorIsBounded() {
        List<RunOutcome> runs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            runs.add(run("slow-" + i, 4.0, 1, i));
        }
        runs.add(run("hung", 40.0, 1, 10));
        CalibrationFactors f = only(factors(runs));
        assertThat(f.usedRuns()).doesNotContain("hung");
        assertThat(f.stepTimeFactor()).isEqualTo(Calibrator.MAX_FACTOR);
    }

    @Test
    void excludedRunsAndRunsBeforeAResetDoNotCount() {
        List<RunOutcome> runs = List.of(run("a", 1.4, 1, 0), run("b", 1.4, 1, 1), run("c", 1.4, 1, 2),
                run("d", 1.0, 1, 100), run("e", 1.0, 1, 101), run("f", 1.0, 1, 102));
        CalibrationFactors all = only(factors(runs));
        CalibrationFactors excluded = only(Calibrator.factors(runs, Set.of("d"), Map.of()));
        assertThat(excluded.excludedRuns()).containsExactly("d");
        assertThat(excluded.usedRuns()).doesNotContain("d");
        assertThat(excluded.stepTimeFactor()).isGreaterThan(all.stepTimeFactor());
        CalibrationFactors reset = only(Calibrator.factors(runs, Set.of(),
                Map.of(Calibrator.key("a100-80gb", "pixart"), T.plusSeconds(50))));
        assertThat(reset.usedRuns()).containsExactly("f", "e", "d");
        assertThat(reset.stepTimeFactor()).isEqualTo(1.0);
    }

    @Test
    void groupsAreSeparate() {
        List<CalibrationFactors> factors = factors(List.of(run("a", 1.4, 1, 0),
                new RunOutcome("h", "h100-sxm", "sana", 1.0, 2.0, null, null, T)));
        assertThat(factors).extracting(CalibrationFactors::gpuId).containsExactly("a100-80gb", "h100-sxm");
    }

    private static List<CalibrationFactors> factors(List<RunOutcome> runs) {
        return Calibrator.factors(runs, Set.of(), Map.of());
    }
}
