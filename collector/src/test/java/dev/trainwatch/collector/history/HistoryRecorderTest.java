package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.state.RunSummary;
import dev.trainwatch.collector.state.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.testing.MutableClock;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryRecorderTest {
    private static final double T0 = 1_800_000_000.0;
    private static final RunSpec SPEC = new RunSpec("pixart-sigma-xl-2", "a800-80gb", 1, 20, 1024, null, null, null,
            "fp16", "came", true, false, "online", 0, null, null, 10_000L);

    @TempDir
    Path dir;

    private final List<RunOutcome> outcomes = new ArrayList<>();
    private final List<String> log = new ArrayList<>();

    private HistoryRecorder recorder(HistoryStore store) {
        return new HistoryRecorder(store,
                spec -> Optional.of(new HistoryRecorder.RawPrediction("a800-80gb", "pixart", 1.0, 60L << 30)),
                outcomes::add, log::add);
    }

    private static RunSummary summary(String runId, boolean ended, Long lastStep, Double stepSeconds,
                                      List<Anomaly> anomalies, Boolean synthetic) {
        return new RunSummary(runId, SPEC, T0, T0 + 100, ended, ended ? T0 + 100 : null, lastStep, T0 + 99,
                stepSeconds, 1.0, 70L << 30, 60L << 30, 0.4, 20.0 / stepSeconds, List.of("node1"),
                List.of("GPU-1"), anomalies, synthetic);
    }

    @Test
    void aRestartedFleetGetsItsRunsSpecsAndActiveAnomaliesBack() {
        Anomaly starving = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, true, T0 + 50, null,
                "GPU waits for data 71% of each step", Map.of("data_wait_ratio", 0.71),
                "precompute T5 and VAE features");
        try (HistoryStore store = HistoryStore.open(dir)) {
            HistoryRecorder recorder = recorder(store);
            recorder.onRunChanged(summary("pixart-1", false, 500L, 6.0, List.of(starving), null));
            recorder.onAnomalyRaised("pixart-1", starving);
        }
        try (HistoryStore store = HistoryStore.open(dir)) {
            MutableClock clock = new MutableClock(Instant.ofEpochMilli((long) ((T0 + 200) * 1000)));
            Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
            List<String> reannounced = new ArrayList<>();
            assertThat(recorder(store).restoreInto(fleet, (run, a) -> reannounced.add(run + ":" + a.kind())))
                    .isEqualTo(1);
            RunView run = fleet.run("pixart-1").orElseThrow();
            assertThat(run.spec().batch()).isEqualTo(20);
            assertThat(run.anomalies()).anySatisfy(a -> {
                assertThat(a.kind()).isEqualTo(AnomalyKind.DATA_STARVATION);
                assertThat(a.active()).isTrue();
            });
            assertThat(reannounced).containsExactly("pixart-1:DATA_STARVATION");
            assertThat(store.anomalies("pixart-1", 10)).singleElement()
                    .satisfies(a -> assertThat(a.resolved()).isNull());
        }
        assertThat(log).isEmpty();
    }

    @Test
    void aFinishedRunBecomesACalibrationOutcomeAgainstTheRawPrediction() {
        try (HistoryStore store = HistoryStore.open(dir)) {
            HistoryRecorder recorder = recorder(store);
            recorder.onRunEnded(summary("real", true, 5_000L, 1.4, List.of(), null));
            recorder.onRunEnded(summary("too-short", true, 3L, 9.0, List.of(), null));
            recorder.onRunEnded(summary("demo-dit", true, 5_000L, 3.0, List.of(), true));
            assertThat(outcomes).singleElement().satisfies(o -> {
                assertThat(o.runId()).isEqualTo("real");
                assertThat(o.predictedStepSeconds()).isEqualTo(1.0);
                assertThat(o.observedStepSeconds()).isEqualTo(1.4);
                assertThat(o.family()).isEqualTo("pixart");
            });
            assertThat(store.outcomes()).hasSize(1);
            assertThat(store.runs(10)).allSatisfy(r -> assertThat(r.ended()).isNotNull());
        }
    }

    @Test
    void aBrokenDatabaseIsLoggedAndNeverFailsTheCaller() {
        HistoryStore store = HistoryStore.open(dir);
        HistoryRecorder recorder = recorder(store);
        store.close();
        recorder.onRunChanged(summary("r", false, 1L, 1.0, List.of(), null));
        assertThat(log).singleElement().satisfies(line -> assertThat(line).startsWith("trainwatch: history: cannot")
                .doesNotContain("\n"));
    }
}
