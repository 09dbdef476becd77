package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
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
                outcomes::add, log::add, Duration.ofSeconds(2), Clock.systemUTC());
    }

    /** A new fleet, 100 s after the runs' last summaries: the collector started again. */
    private static Fleet fleetAfterRestart() {
        SettableClock clock = new SettableClock(Instant.ofEpochMilli((long) ((T0 + 200) * 1000)));
        return new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
    }

    private static RunSummary summary(String runId, boolean ended, Long lastStep, Double stepSeconds,
                                      List<Anomaly> anomalies, Boolean synthetic) {
        return new RunSummary(runId, SPEC, T0, T0 + 100, ended, ended ? T0 + 100 : null, lastStep, T0 + 99,
                stepSeconds, 1.0, 70L << 30, 60L << 30, 0.4, 20.0 / stepSeconds, List.of("node1"),
                List.of("GPU-1"), anomalies, synthetic, null, null, null);
    }

    @Test
    void aRestartedFleetGetsItsRunsSpecsAndActiveAnomaliesBack() {
        Anomaly starving = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, true, T0 + 50, null,
                "GPU waits for data 71% of each step", Map.of("data_wait_ratio", 0.71),
                "precompute T5 and VAE features");
        try (HistoryStore store = HistoryStore.open(dir); HistoryRecorder recorder = recorder(store)) {
            recorder.onRunChanged(summary("pixart-1", false, 500L, 6.0, List.of(starving), null));
            recorder.onAnomalyRaised("pixart-1", starving);
        } // the recorder closes first and writes the pending summary
        try (HistoryStore store = HistoryStore.open(dir)) {
            Fleet fleet = fleetAfterRestart();
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
            assertThat(store.outcomes()).as("ended runs are written by the writer").isEmpty();
            recorder.writer().flush();
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

    /** One GPU of run {@code busy} at {@code usedBytes}, as agent batch {@code seq}. */
    private static AgentBatch batch(long seq, double ts, long usedBytes) {
        return new AgentBatch("node1", "agent-1", seq,
                List.of(Payloads.sample(ts, 0, "GPU-1", usedBytes, 0.95, List.of())),
                List.of(new RunAttribution("busy", List.of(4242L), List.of("GPU-1"), null, null, null, null, null, null, null, null)), List.of(),
                null, null, null, null);
    }

    @Test
    void anAnomalyResolvedAfterTheLastSummaryComesBackResolvedAndIsNotAnnouncedAgain() {
        Anomaly starving = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, true, T0 + 50, null,
                "GPU waits for data 71% of each step", Map.of("data_wait_ratio", 0.71),
                "precompute T5 and VAE features");
        try (HistoryStore store = HistoryStore.open(dir)) {
            HistoryRecorder recorder = recorder(store);
            recorder.onAnomalyRaised("pixart-1", starving);
            recorder.onRunChanged(summary("pixart-1", false, 500L, 6.0, List.of(starving), null));
            recorder.writer().flush();
            // Resolved, written at once; the collector is killed before the next summary is written.
            recorder.onAnomalyResolved("pixart-1", starving.resolved(T0 + 90));
        }
        try (HistoryStore store = HistoryStore.open(dir)) {
            Fleet fleet = fleetAfterRestart();
            List<String> reannounced = new ArrayList<>();
            assertThat(recorder(store).restoreInto(fleet, (run, a) -> reannounced.add(run + ":" + a.kind())))
                    .isEqualTo(1);
            assertThat(reannounced).isEmpty();
            assertThat(fleet.run("pixart-1").orElseThrow().anomalies()).singleElement().satisfies(a -> {
                assertThat(a.kind()).isEqualTo(AnomalyKind.DATA_STARVATION);
                assertThat(a.active()).isFalse();
                assertThat(a.resolvedAt()).isEqualTo(T0 + 90);
            });
        }
        assertThat(log).isEmpty();
    }

    @Test
    void anAnomalyThatChangedSeverityAfterTheLastSummaryComesBackWithItsNewSeverity() {
        Anomaly warning = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.WARNING, true, T0 + 50, null,
                "GPU waits for data 40% of each step", Map.of("data_wait_ratio", 0.4), "more loader workers");
        Anomaly critical = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, true, T0 + 80, null,
                "GPU waits for data 71% of each step", Map.of("data_wait_ratio", 0.71), "more loader workers");
        try (HistoryStore store = HistoryStore.open(dir)) {
            HistoryRecorder recorder = recorder(store);
            recorder.onAnomalyRaised("pixart-1", warning);
            recorder.onRunChanged(summary("pixart-1", false, 500L, 6.0, List.of(warning), null));
            recorder.writer().flush();
            recorder.onAnomalyRaised("pixart-1", critical); // killed before the next summary
        }
        try (HistoryStore store = HistoryStore.open(dir)) {
            Fleet fleet = fleetAfterRestart();
            List<Severity> reannounced = new ArrayList<>();
            recorder(store).restoreInto(fleet, (run, a) -> reannounced.add(a.severity()));
            assertThat(reannounced).containsExactly(Severity.CRITICAL);
            assertThat(fleet.run("pixart-1").orElseThrow().anomalies()).filteredOn(Anomaly::active).singleElement()
                    .satisfies(a -> assertThat(a.message()).startsWith("GPU waits for data 71%"));
        }
        assertThat(log).isEmpty();
    }

    private RunSummary storedSummary(HistoryStore store, String runId) throws Exception {
        StoredRun run = store.runs(10).stream().filter(r -> r.runId().equals(runId)).findFirst().orElseThrow();
        return Json.MAPPER.readValue(run.summaryJson(), RunSummary.class);
    }

    @Test
    void aBusyRunIsWrittenEveryFewSecondsWithItsNewestNumbersAndAllOfThemOnClose() throws Exception {
        SettableClock clock = new SettableClock(Instant.ofEpochMilli((long) (T0 * 1000)));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        List<RunSummary> sent = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onRunChanged(RunSummary summary) {
                sent.add(summary);
            }
        });
        try (HistoryStore store = HistoryStore.open(dir)) {
            HistoryRecorder recorder = new HistoryRecorder(store, spec -> Optional.empty(), outcomes::add, log::add,
                    Duration.ofSeconds(2), clock);
            fleet.addListener(recorder);
            long peak = 40_000_000_000L;
            // 30 s of a run whose peak memory rises and that reports a step every 100 ms: 600 material changes.
            for (int i = 1; i <= 300; i++) {
                peak += 1_000_000;
                fleet.ingestBatch(batch(i, clock.seconds(), peak));
                fleet.ingestSteps("busy", List.of(StepEvent.of(i, 0.1, clock.seconds())));
                clock.advance(Duration.ofMillis(100));
                if (i % 10 == 0) {
                    fleet.tick();
                }
                recorder.writer().flushIfDue();
            }
            // The fleet sends a summary at most every 2 s, and the writer writes at most every 2 s.
            assertThat(sent).hasSizeBetween(14, 17);
            assertThat(recorder.writer().stats().writes()).isBetween(14L, 16L);
            RunSummary onDisk = storedSummary(store, "busy");
            assertThat(onDisk.lastStep()).as("at most 2 s behind").isBetween(280L, 300L);

            // A kill now would lose at most the last 2 s: one interval later the newest numbers are on disk.
            clock.advance(Duration.ofSeconds(2));
            fleet.tick();
            recorder.writer().flushIfDue();
            onDisk = storedSummary(store, "busy");
            assertThat(onDisk.lastStep()).isEqualTo(300);
            assertThat(onDisk.peakMemoryBytes()).isEqualTo(peak);

            // Orderly shutdown: what changed a moment ago is written too, without waiting for any interval.
            fleet.ingestBatch(batch(301, clock.seconds(), peak + 123));
            fleet.ingestSteps("busy", List.of(StepEvent.of(301, 0.1, clock.seconds())));
            fleet.publishChangedSummaries();
            recorder.close();
            onDisk = storedSummary(store, "busy");
            assertThat(onDisk.lastStep()).isEqualTo(301);
            assertThat(onDisk.peakMemoryBytes()).isEqualTo(peak + 123);
        }
        assertThat(log).isEmpty();
    }

    @Test
    void aChangeReachesTheDiskWithinTwoIntervalsWhenAnotherRunKeepsTheWriterBusy() throws Exception {
        // The fleet holds a run's change for up to one interval, then the writer, busy with another run's
        // summary, for up to one more: what a SIGKILL can lose is two intervals (docs/API.md), not one.
        SettableClock clock = new SettableClock(Instant.ofEpochMilli((long) (T0 * 1000)));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        try (HistoryStore store = HistoryStore.open(dir)) {
            HistoryRecorder recorder = new HistoryRecorder(store, spec -> Optional.empty(), outcomes::add, log::add,
                    Duration.ofSeconds(2), clock);
            fleet.addListener(recorder);
            fleet.ingestSteps("a", List.of(StepEvent.of(1, 1.0, clock.seconds())));
            recorder.writer().flushIfDue(); // t = 0: a's first summary, written at once
            clock.advance(Duration.ofMillis(100));
            fleet.ingestSteps("a", List.of(StepEvent.of(2, 1.0, clock.seconds()))); // held by the fleet until t = 2
            clock.advance(Duration.ofMillis(1_900));
            fleet.ingestSteps("b", List.of(StepEvent.of(1, 1.0, clock.seconds())));
            recorder.writer().flushIfDue(); // t = 2: b's first summary takes the writer's slot
            clock.advance(Duration.ofMillis(100));
            fleet.ingestSteps("a", List.of(StepEvent.of(3, 1.0, clock.seconds()))); // a is sent now (t = 2.1) ...
            for (int i = 0; i < 18; i++) { // ... and waits for the writer until t = 4
                clock.advance(Duration.ofMillis(100));
                fleet.tick();
                recorder.writer().flushIfDue();
                assertThat(storedSummary(store, "a").lastStep()).as("at t = %.1f s", 2.2 + i * 0.1).isEqualTo(1);
            }
            clock.advance(Duration.ofMillis(100));
            recorder.writer().flushIfDue();
            assertThat(storedSummary(store, "a").lastStep()).as("step 2 of t = 0.1 s, on disk at t = 4 s").isEqualTo(3);
            recorder.close();
        }
        assertThat(log).isEmpty();
    }

    @Test
    void aBrokenDatabaseIsLoggedAndNeverFailsTheCaller() {
        HistoryStore store = HistoryStore.open(dir);
        HistoryRecorder recorder = recorder(store);
        store.close();
        for (int i = 1; i <= 5; i++) {
            recorder.onRunChanged(summary("r", false, (long) i, 1.0, List.of(), null));
        }
        assertThat(log).as("the spec is tried once, not on every summary").singleElement()
                .satisfies(line -> assertThat(line).startsWith("trainwatch: history: cannot").doesNotContain("\n"));
    }
}
