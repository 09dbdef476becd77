package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Idle gaps without a data time in the log, on slow-data-no-spec's figures: 1.0 s steps, then 4.0 s steps. */
class StarvationIdleGapsTest {

    private static final DetectorSettings.DataStarvation S = DetectorSettings.defaults().dataStarvation();
    private final StarvationIdleGaps idleGaps = new StarvationIdleGaps(S.idleGaps());
    private static final double NOW = 10_000;

    private static FakeRun run(boolean slowed, double idleFraction) {
        List<Scenario.Phase> phases = Scenario.load("slow-data-no-spec").phases();
        List<FakeRun.Report> reports = new ArrayList<>(FakeRun.reports(phases.get(0).steps(), 15, NOW - 120, 20));
        reports.addAll(FakeRun.reports(phases.get(slowed ? 1 : 0).steps(), 6, NOW, 400));
        FakeRun run = new FakeRun(NOW);
        run.steps = new FakeRun.Steps(reports);
        run.gpus.add(FakeRun.gpu("GPU-0", NOW - 300, NOW, t -> FakeRun.Poll.idle(t, t > NOW - 120 ? idleFraction : 0)));
        return run;
    }

    @Test
    void aRunWithoutASpecIsComparedWithItsOwnEarlierSteps() {
        Finding f = idleGaps.evaluate(run(true, 0.6), NOW - 300, false, 21).orElseThrow();
        assertThat(f.message()).contains("steps take 4.00 s, 4.0× slower than this run's own earlier 1.00 s");
        assertThat(f.evidence()).containsEntry("earlier_step_seconds", 1.0).containsEntry("slowdown_ratio", 4.0);
    }

    @Test
    void gapsWithoutSlowerStepsOrSlowerStepsWithoutGapsAreQuiet() {
        assertThat(idleGaps.evaluate(run(false, 0.6), NOW - 300, false, 21)).isEmpty();
        assertThat(idleGaps.evaluate(run(true, 0.0), NOW - 300, false, 21)).isEmpty();
    }

    @Test
    void theWorkingSmLevelIsTheEightiethPercentile() {
        FakeRun.Gpu g = FakeRun.gpu("GPU-0", 0, 10, t -> new FakeRun.Poll(t, 1, 0, 300, t / 10, Double.NaN,
                Double.NaN, Double.NaN));
        assertThat(StarvationIdleGaps.smWorkingLevel(g, 0)).isEqualTo(0.8);
        assertThat(StarvationIdleGaps.smWorkingLevel(FakeRun.gpu("GPU-1", 0, 10, t -> FakeRun.Poll.idle(t, 0)), 0))
                .isNaN();
    }
}
