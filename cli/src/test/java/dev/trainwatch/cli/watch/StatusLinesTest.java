package dev.trainwatch.cli.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.view.ComparisonView;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatusLinesTest {

    private static final long GIB = 1L << 30;

    private static RunView run(String id, List<Anomaly> anomalies, Boolean synthetic) {
        ObservedView observed = new ObservedView(50 * GIB, 48 * GIB, 80 * GIB, 1.5, 0.62, null, null, 0.4, 10.0,
                12_345L, 100.0, null, null, 1, 300.0,
                null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
        ComparisonView comparison = new ComparisonView(1.0, 1.5, 44 * GIB, 50.0 / 44, 30 * GIB, 80 * GIB, 15.0,
                0.66, 1000L, 1500.0, null, null, null, null);
        return new RunView(id, null, null, observed, comparison, anomalies, List.of(), List.of("node"), 1.0, 100.0,
                false, null, synthetic, null, null, null, null);
    }

    @Test
    void showsStepStepTimeAgainstPredictionVramAndActiveAnomalies() {
        Anomaly starving = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, true, 50, null, "m",
                Map.of(), "s");
        Anomaly resolved = new Anomaly(AnomalyKind.OOM_RISK, Severity.WARNING, false, 10, 20.0, "m", Map.of(), "s");
        String line = StatusLines.line(run("pixart", List.of(starving, resolved), null));
        assertThat(line).isEqualTo("pixart  step 12345  1.50 s/step (predicted 1.00 s, ×1.50)"
                + "  VRAM 50.0 GiB (predicted 44.0 GiB) of 80.0 GiB  data_starvation (critical)");
    }

    @Test
    void aRunThatEndedStarvedEndsWithItNotOk() {
        Anomaly starving = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.WARNING, true, 50, null, "m",
                Map.of(), "s").endedWithRun(300.0);
        Anomaly resolved = new Anomaly(AnomalyKind.OOM_RISK, Severity.WARNING, false, 10, 20.0, "m", Map.of(), "s");
        String line = StatusLines.line(run("pixart", List.of(starving, resolved), null));
        assertThat(line).endsWith("  data_starvation (unresolved at the end)").doesNotContain("ok");
    }

    @Test
    void aHealthyRunSaysOkAndASyntheticOneSaysSo() {
        assertThat(StatusLines.line(run("demo-x", List.of(), true))).startsWith("demo-x [synthetic]  step").endsWith("  ok");
    }

    @Test
    void aRunWithNothingObservedYetShowsDashes() {
        RunView empty = new RunView("new", null, null, null, null, List.of(), List.of(), List.of(), 1.0, null, false,
                null, null, null, null, null, null);
        assertThat(StatusLines.line(empty)).isEqualTo("new  step –  – s/step  VRAM –  ok");
    }

    @Test
    void cutsLinesToTheTerminalWidth() {
        assertThat(StatusLines.render(List.of(run("a-very-long-run-id", List.of(), null)), 20))
                .containsExactly("a-very-long-run-id …");
    }
}
