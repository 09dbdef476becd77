package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoublePredicate;
import org.junit.jupiter.api.Test;

/**
 * The newest report confirmed by the GPUs, on pixart-starved-after-healthy's figures: 1.02 s steps with 0.03 s data,
 * then 4.0 s steps with 2.8 s of data time reported every 20 s (five steps a report).
 */
class StarvationGpuConfirmationTest {

    private static final DetectorSettings.DataStarvation S = DetectorSettings.defaults().dataStarvation();
    private final StarvationGpuConfirmation confirmation = new StarvationGpuConfirmation(S.gpuConfirm());
    /** The starved report is written here; healthy reports every 5 s before it. */
    private static final double WRITTEN = 10_000;

    private static FakeRun run(double now, DoublePredicate idleAt) {
        List<Scenario.Phase> phases = Scenario.load("pixart-starved-after-healthy").phases();
        List<FakeRun.Report> reports = new ArrayList<>(FakeRun.reports(phases.get(1).steps(), 40, WRITTEN - 20, 100));
        reports.addAll(FakeRun.reports(phases.get(2).steps(), 1, WRITTEN, 400));
        FakeRun run = new FakeRun(now);
        run.steps = new FakeRun.Steps(reports);
        for (String uuid : List.of("GPU-0", "GPU-1")) {
            run.gpus.add(FakeRun.gpu(uuid, WRITTEN - 200, now + 0.5,
                    t -> FakeRun.Poll.idle(t, idleAt.test(t) ? 0.9 : 0.02)));
        }
        return run;
    }

    /** A starved loop from the fault on: the first 2.8 s of every 4 s step idle. */
    private static boolean starvedLoop(double t) {
        return t >= WRITTEN - 20 && Math.floorMod((long) t, 4) < 3;
    }

    @Test
    void gapsAllThroughTheReportAndAfterItConfirmItTwoSecondsLater() {
        FakeRun early = run(WRITTEN + 1, StarvationGpuConfirmationTest::starvedLoop);
        assertThat(confirmation.evaluate(early, WRITTEN - 300, S.logWait())).isEmpty();
        FakeRun run = run(WRITTEN + 2, StarvationGpuConfirmationTest::starvedLoop);
        assertThat(confirmation.gapsThroughout(run, WRITTEN - 20, WRITTEN, 4.0)).isTrue();
        Finding f = confirmation.evaluate(run, WRITTEN - 300, S.logWait()).orElseThrow();
        assertThat(f.message()).startsWith("70% of each 4.00 s step is data time")
                .contains("the GPUs idled between all its steps");
        assertThat(f.evidence()).containsEntry("idle_gaps_all_through_report", true);
    }

    @Test
    void oneLongWaitThatEndsAsTheReportIsWrittenIsNotConfirmed() {
        // The GPUs idle through the first half of the report's span, then are busy again.
        DoublePredicate oneWait = t -> t >= WRITTEN - 20 && t < WRITTEN - 10;
        FakeRun run = run(WRITTEN + 10, oneWait);
        assertThat(confirmation.gapsThroughout(run, WRITTEN - 20, WRITTEN, 4.0)).isFalse();
        assertThat(confirmation.evaluate(run, WRITTEN - 300, S.logWait())).isEmpty();
    }

    @Test
    void gapsThatWereThereBeforeTheReportAreNotNew() {
        FakeRun run = run(WRITTEN + 10, t -> Math.floorMod((long) t, 4) < 3);
        assertThat(confirmation.gappyShare(run, WRITTEN - 300, WRITTEN - 20)).isGreaterThan(0.5);
        assertThat(confirmation.evaluate(run, WRITTEN - 300, S.logWait())).isEmpty();
    }
}
