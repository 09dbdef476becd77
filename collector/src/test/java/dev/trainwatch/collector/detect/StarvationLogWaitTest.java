package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The log's wait share in the newest reports, on the scenario traces' step figures. */
class StarvationLogWaitTest {

    private static final DetectorSettings.LogWait S = DetectorSettings.defaults().dataStarvation().logWait();

    private static Scenario.Steps steps(String trace, String phase) {
        return Scenario.load(trace).phases().stream().filter(p -> p.name().equals(phase)).findFirst().orElseThrow()
                .steps();
    }

    @Test
    void sanasSplitStepIsReadAsLoaderTextEncoderAndVaeShares() {
        // sana-loader-starved: data 3.0, lm 0.5, vae 0.3 of a 5.0 s step, a report every 25 s.
        FakeRun run = new FakeRun(10_000);
        run.steps = new FakeRun.Steps(FakeRun.reports(steps("sana-loader-starved", "starved"), 6, 10_000, 5));
        StarvationLogWait w = StarvationLogWait.newest(run.steps(), 10_000 - 300, 2, 30);
        assertThat(w.reports()).isEqualTo(2); // two reports of five 5-s steps cover the 30 s
        assertThat(w.share()).isCloseTo(0.76, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(w.loader()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(w.holds(S, false)).isTrue();
        assertThat(w.severity(S)).isEqualTo(Severity.CRITICAL);
        Finding f = w.finding(run, S);
        assertThat(f.message()).isEqualTo("76% of each 5.00 s step is spent before the model runs: data loading 60%, "
                + "text encoder 10%, VAE 6%");
        assertThat(f.suggestion()).startsWith("make the input pipeline faster");
        assertThat(f.evidence()).containsEntry("vae_ratio", 0.06).containsEntry("step_reports", 2);
    }

    @Test
    void oneLongWaitIsOneReportAndNeverHolds() {
        // one-long-data-wait-sparse-log: one report of 2.0 s steps with 1.0 s data among 1.0 s steps with 0.02 s.
        List<FakeRun.Report> r = new ArrayList<>(FakeRun.reports(steps("one-long-data-wait-sparse-log", "healthy"), 5,
                900, 20));
        r.addAll(FakeRun.reports(steps("one-long-data-wait-sparse-log", "epoch-boundary-catch-up"), 1, 920, 120));
        // The newest report alone says 50% (what the GPUs' confirmation has to deny); with the one before it, not.
        assertThat(StarvationLogWait.newest(new FakeRun.Steps(r), 600, 1, 0).medianReport()).isEqualTo(0.5);
        StarvationLogWait w = StarvationLogWait.newest(new FakeRun.Steps(r), 600, 2, 30);
        assertThat(w.reports()).isEqualTo(2);
        assertThat(w.lowestOfNewest()).isLessThan(0.3);
        assertThat(w.holds(S, false)).isFalse();
        // Once raised, it is held while the share stays above the clear share.
        assertThat(w.holds(S, true)).isEqualTo(w.share() > S.waitClearRatio());
    }

    @Test
    void reportsWithoutAWaitAreNotCounted() {
        FakeRun.Report plain = new FakeRun.Report(100, 10, 1.0, Double.NaN, Double.NaN, Double.NaN, 1);
        assertThat(StarvationLogWait.newest(new FakeRun.Steps(List.of(plain, plain)), 0, 1, 0)).isNull();
    }
}
