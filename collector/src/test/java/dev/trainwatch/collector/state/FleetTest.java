package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.ended;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FleetTest {

    private static final long GIB = FakePredictor.GIB;

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final FakePredictor predictor = new FakePredictor();
    private final Fleet fleet = new Fleet(predictor, clock, FleetSettings.defaults(), DetectorSettings.defaults());

    private static RunSpec spec(String model, Integer batch, String features, Long totalSteps) {
        return new RunSpec(model, null, null, batch, 1024, null, null, null, "bf16", "adamw", true, false, features,
                0, null, null, totalSteps);
    }

    @Test
    void putSpecAnswersWithTheEstimateAndAnInvalidSpecChangesNothing() {
        RunView v = fleet.putSpec("r1", spec("pixart-sigma-xl-2", 8, "precomputed", 1000L));
        assertThat(v.estimate().stepSeconds()).isEqualTo(1.0);
        assertThat(v.spec().gpu()).isEqualTo("a100-80gb");
        assertThat(v.comparison().predictedPeakMemoryBytes()).isEqualTo(38 * GIB);

        assertThatThrownBy(() -> fleet.putSpec("r2", spec("no-such-model", 8, null, null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("no-such-model");
        assertThat(fleet.run("r2")).isEmpty();
        assertThatThrownBy(() -> fleet.putSpec("r1", spec("no-such-model", 8, null, null)))
                .isInstanceOf(InvalidSpecException.class);
        assertThat(fleet.run("r1").orElseThrow().spec().model()).isEqualTo("pixart-sigma-xl-2");
    }

    @Test
    void replayedBatchesAreDuplicates() {
        double t = clock.seconds();
        var b = batch("node1", "agent-a", 5, List.of(gpu(t, 0, "GPU-0", 10 * GIB, 0.9)), List.of(), List.of());
        assertThat(fleet.ingestBatch(b)).isEqualTo(new IngestResult(false, 1));
        assertThat(fleet.ingestBatch(b)).isEqualTo(new IngestResult(true, 1));
        // Exactly the batches applied are duplicates: 4 was never applied (see ForgedSeqTest).
        assertThat(fleet.ingestBatch(batch("node1", "agent-a", 4, List.of(), List.of(), List.of())))
                .isEqualTo(new IngestResult(false, 0));
        assertThat(fleet.ingestBatch(batch("node1", "agent-a", 4, List.of(), List.of(), List.of())))
                .isEqualTo(new IngestResult(true, 0));
        assertThat(fleet.ingestBatch(batch("node1", "agent-a", 6, List.of(), List.of(), List.of())))
                .isEqualTo(new IngestResult(false, 0));
        assertThat(fleet.agents()).singleElement().satisfies(a -> {
            assertThat(a.lastSeq()).isEqualTo(6);
            assertThat(a.batches()).isEqualTo(3);
            assertThat(a.duplicates()).isEqualTo(2);
        });
        assertThatThrownBy(() -> fleet.ingestBatch(batch(null, "x", 1, null, null, null)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void runAppearsFromAttributionAndComparisonStartsWithTheSpec() {
        double t = clock.seconds();
        fleet.ingestBatch(batch("node1", "agent-a", 1,
                List.of(gpu(t, 0, "GPU-0", 40 * GIB, 0.95), gpu(t, 1, "GPU-1", 50 * GIB, 0.9)),
                List.of(attribution("job-7", List.of("GPU-0", "GPU-1"))), List.of()));
        RunView before = fleet.run("job-7").orElseThrow();
        assertThat(before.spec()).isNull();
        assertThat(before.observed().gpuCount()).isEqualTo(2);
        assertThat(before.observed().peakMemoryBytes()).isEqualTo(50 * GIB);
        assertThat(before.comparison().headroomBytes()).isEqualTo(30 * GIB);
        assertThat(before.comparison().stepTimeRatio()).isNull();

        fleet.ingestSteps("job-7", List.of(new StepEvent(100L, 2.0, 0.1, null, null, null, 10, 16.0, null, null,
                null, null, null, null, t, null)));
        // No GPU in the spec: taken from the NVML name of the run's GPUs.
        RunView after = fleet.putSpec("job-7", spec("pixart-sigma-xl-2", 8, null, 1100L));
        assertThat(after.spec().gpu()).isEqualTo("a100-80gb");
        assertThat(after.comparison().stepTimeRatio()).isEqualTo(2.0);
        assertThat(after.comparison().memoryRatio()).isCloseTo(50.0 / 38.0, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(after.comparison().remainingSteps()).isEqualTo(1000);
        assertThat(after.comparison().etaSeconds()).isEqualTo(2000.0);
        assertThat(after.observed().samplesPerSecond()).isEqualTo(8.0);
        assertThat(after.observed().dataWaitRatio()).isEqualTo(0.05);
        assertThat(after.hosts()).containsExactly("node1");
    }

    @Test
    void runViewSerialisesToTheApiShape() throws Exception {
        fleet.putSpec("r1", spec("pixart-sigma-xl-2", 8, "online", 1000L));
        fleet.ingestSteps("r1", List.of(StepEvent.of(10, 1.5, clock.seconds())));
        JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(fleet.run("r1").orElseThrow()));
        assertThat(json.get("run_id").asText()).isEqualTo("r1");
        assertThat(json.get("spec").get("model").asText()).isEqualTo("pixart-sigma-xl-2");
        assertThat(json.get("estimate").get("peak_memory_bytes").asLong()).isEqualTo(48 * GIB);
        assertThat(json.get("observed").get("step_seconds").asDouble()).isEqualTo(1.5);
        assertThat(json.get("observed").get("last_step").asLong()).isEqualTo(10);
        assertThat(json.get("comparison").get("step_time_ratio").asDouble()).isEqualTo(0.6);
        assertThat(json.get("comparison").has("eta_seconds")).isTrue();
        assertThat(json.get("anomalies").isArray()).isTrue();
        assertThat(json.get("ended").asBoolean()).isFalse();
        assertThat(json.has("synthetic")).isFalse();
    }

    @Test
    void runEndsWhenEveryHostSaysSoAndListenersHearIt() {
        List<String> events = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onRunChanged(RunSummary s) {
                events.add("changed " + s.runId());
            }

            @Override
            public void onRunEnded(RunSummary s) {
                events.add("ended " + s.runId() + " " + s.ended());
            }
        });
        double t = clock.seconds();
        fleet.ingestBatch(batch("n1", "a1", 1, List.of(gpu(t, 0, "GPU-0", GIB, 0.9)),
                List.of(attribution("job", List.of("GPU-0"))), List.of()));
        fleet.ingestBatch(batch("n2", "a2", 1, List.of(gpu(t, 0, "GPU-9", GIB, 0.9)),
                List.of(attribution("job", List.of("GPU-9"))), List.of()));
        fleet.ingestBatch(batch("n1", "a1", 2, List.of(), List.of(ended("job", List.of("GPU-0"))), List.of()));
        assertThat(fleet.run("job").orElseThrow().ended()).isFalse();
        clock.advance(Duration.ofSeconds(5));
        fleet.ingestBatch(batch("n2", "a2", 2, List.of(), List.of(ended("job", List.of("GPU-9"))), List.of()));
        RunView v = fleet.run("job").orElseThrow();
        assertThat(v.ended()).isTrue();
        assertThat(v.endedAt()).isEqualTo(clock.seconds());
        assertThat(events).containsExactly("changed job", "ended job true");
    }

    @Test
    void runSummariesAreBuiltOnlyWhileSomeListenerWantsThem() {
        List<String> declined = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public boolean wantsRunChanges() {
                return false;
            }

            @Override
            public void onRunChanged(RunSummary s) {
                declined.add("changed " + s.runId() + " " + s.lastStep());
            }

            @Override
            public void onRunEnded(RunSummary s) {
                declined.add("ended " + s.runId());
            }
        });
        double t = clock.seconds();
        fleet.ingestBatch(batch("n1", "a1", 1, List.of(gpu(t, 0, "GPU-0", GIB, 0.9)),
                List.of(attribution("job", List.of("GPU-0"))), List.of()));
        fleet.ingestSteps("job", List.of(StepEvent.of(10, 1.0, t)));
        clock.advance(Duration.ofSeconds(90));
        fleet.tick();
        assertThat(declined).isEmpty(); // nobody wants summaries: none built, none sent

        List<String> wanted = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onRunChanged(RunSummary s) {
                wanted.add("changed " + s.runId() + " " + s.lastStep());
            }
        });
        fleet.ingestSteps("job", List.of(StepEvent.of(20, 1.0, clock.seconds())));
        clock.advance(Duration.ofSeconds(3));
        fleet.tick();
        assertThat(wanted).containsExactly("changed job 20");
        fleet.ingestBatch(batch("n1", "a1", 2, List.of(), List.of(ended("job", List.of("GPU-0"))), List.of()));
        // Run ends are told to every listener, and changes to all once one wants them.
        assertThat(declined).containsExactly("changed job 20", "ended job");
    }

    @Test
    void aRunSummaryCarriesTheSameNumbersAsTheRunsView() {
        List<RunSummary> summaries = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onRunChanged(RunSummary s) {
                summaries.add(s);
            }
        });
        // Two nodes of two GPUs, two ranks reporting steps with data and encoder time, a minute and a half of it.
        for (int k = 0; k < 90; k++) {
            double t = clock.seconds();
            for (int n = 0; n < 2; n++) {
                String a = "GPU-" + (2 * n);
                String b = "GPU-" + (2 * n + 1);
                fleet.ingestBatch(batch("n" + n, "a" + n, k + 1,
                        List.of(gpu(t, 0, a, (40 + k % 7) * GIB, 0.5 + 0.005 * k), gpu(t, 1, b, 41 * GIB, 0.8)),
                        List.of(attribution("job", List.of(a, b))), List.of()));
            }
            if (k % 3 == 0) {
                for (int rank = 0; rank < 2; rank++) {
                    fleet.ingestSteps("job", List.of(new StepEvent((long) k, 3.0 + 0.1 * (k % 5) + rank, 1.0 + rank,
                            null, 0.3, 0.2, 3, 48.0, 0.1, null, null, null, null, rank, t, null)));
                }
            }
            clock.advance(Duration.ofSeconds(1));
            fleet.tick();
        }
        fleet.publishChangedSummaries();
        RunSummary s = summaries.get(summaries.size() - 1);
        ObservedView o = fleet.run("job").orElseThrow().observed();
        assertThat(o.dataWaitRatio()).isNotNull();
        assertThat(o.textEncoderRatio()).isNotNull();
        assertThat(o.samplesPerSecond()).isNotNull();
        assertThat(List.of(s.lastStep(), s.lastStepTs(), s.stepSeconds(), s.peakMemoryBytes(), s.gpuUtilizationRatio(),
                s.samplesPerSecond(), s.dataWaitRatio(), s.textEncoderRatio(), s.vaeRatio()))
                .isEqualTo(List.of(o.lastStep(), o.lastStepTs(), o.stepSeconds(), o.peakMemoryBytes(),
                        o.gpuUtilizationRatio(), o.samplesPerSecond(), o.dataWaitRatio(), o.textEncoderRatio(),
                        o.vaeRatio()));
    }

    @Test
    void hostileRunIdsCannotGrowTheFleetBeyondItsLimitNorPushOutLiveRuns() {
        Fleet small = new Fleet(predictor, clock, new FleetSettings(10, 8, 4, Duration.ofMinutes(10), 60, 16,
                Duration.ofSeconds(1), 5, Duration.ofHours(1)), DetectorSettings.defaults());
        small.putSpec("keep", spec("dit-xl-2", 8, null, null));
        int refusedRuns = 0;
        int refusedAgents = 0;
        for (int i = 0; i < 1000; i++) {
            clock.advance(Duration.ofMillis(10));
            try {
                small.ingestSteps("junk-" + i, List.of(StepEvent.of(1, 1.0, clock.seconds())));
            } catch (LimitReachedException e) {
                refusedRuns++;
            }
            double t = clock.seconds();
            try {
                small.ingestBatch(batch("h" + i, "agent-" + i, 1, List.of(gpu(t, 0, "GPU-x" + i, GIB, 0.5)),
                        List.of(), List.of()));
            } catch (LimitReachedException e) {
                refusedAgents++;
            }
        }
        assertThat(small.runs()).hasSize(10);
        assertThat(small.gpus()).hasSize(4);
        assertThat(small.agents()).hasSize(4);
        // The spec-only run keeps its slot (it was accepted: issue #45); the first runs that reported keep theirs;
        // the rest of the burst is refused.
        assertThat(small.run("keep")).isPresent();
        assertThat(small.run("junk-0")).isPresent();
        assertThat(small.run("junk-999")).isEmpty();
        assertThat(refusedRuns).isEqualTo(991);
        assertThat(refusedAgents).isEqualTo(996);
    }

    @Test
    void endedRunsAreEvictedBeforeLiveOnes() {
        Fleet small = new Fleet(predictor, clock, new FleetSettings(2, 8, 4, Duration.ofMinutes(10), 60, 16,
                Duration.ofSeconds(1), 5, Duration.ofHours(1)), DetectorSettings.defaults());
        small.ingestSteps("live", List.of(StepEvent.of(1, 1.0, clock.seconds())));
        clock.advance(Duration.ofSeconds(1));
        small.ingestSteps("done", List.of(StepEvent.of(1, 1.0, clock.seconds())));
        small.endRun("done");
        clock.advance(Duration.ofSeconds(1));
        small.ingestSteps("new", List.of(StepEvent.of(1, 1.0, clock.seconds())));
        assertThat(small.runs()).extracting(RunView::runId).containsExactlyInAnyOrder("live", "new");
    }

    @Test
    void badReadingsAreIgnoredNotStored() {
        fleet.ingestSteps("r", List.of(
                new StepEvent(1L, Double.NaN, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
                new StepEvent(2L, -1.0, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
                new StepEvent(null, 1.0, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
                StepEvent.of(3, 2.0, clock.seconds() + 3600))); // future ts clamped to now
        RunView v = fleet.run("r").orElseThrow();
        assertThat(v.observed().lastStep()).isEqualTo(3);
        assertThat(v.observed().lastStepTs()).isEqualTo(clock.seconds());
        assertThat(v.observed().stepSeconds()).isEqualTo(2.0);
    }

    @Test
    void restoredRunComesBackWithItsSpecAndActiveAnomalies() throws Exception {
        var anomaly = new dev.trainwatch.collector.detect.Anomaly(
                dev.trainwatch.collector.detect.AnomalyKind.OOM_RISK,
                dev.trainwatch.collector.detect.Severity.CRITICAL, true, clock.seconds() - 60, null, "m",
                java.util.Map.of("headroom_bytes", 1), "s");
        RunSummary summary = new RunSummary("old", spec("dit-xl-2", 8, null, 500L), clock.seconds() - 3600,
                clock.seconds() - 10, false, null, 400L, clock.seconds() - 10, 1.0, 1.0, 40 * GIB, 38 * GIB, 0.9,
                8.0, List.of("n1"), List.of("GPU-0"), List.of(anomaly), null, null, null, null);
        // Through JSON, as the history stores it.
        RunSummary read = Json.MAPPER.readValue(Json.MAPPER.writeValueAsString(summary), RunSummary.class);
        List<String> raised = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onAnomalyRaised(String runId, dev.trainwatch.collector.detect.Anomaly a) {
                raised.add(runId);
            }
        });
        fleet.restoreRun(read);
        RunView v = fleet.run("old").orElseThrow();
        assertThat(v.estimate()).isNotNull();
        assertThat(v.observed().lastStep()).isEqualTo(400);
        assertThat(v.comparison().remainingSteps()).isEqualTo(100);
        assertThat(v.anomalies()).singleElement().satisfies(a -> {
            assertThat(a.active()).isTrue();
            assertThat(a.severity()).isEqualTo(dev.trainwatch.collector.detect.Severity.CRITICAL);
        });
        assertThat(raised).isEmpty();
    }

    @Test
    void aFailedRunRestoredAfterARestartStillSaysWhyItFailed() throws Exception {
        var failed = new dev.trainwatch.collector.detect.Anomaly(
                dev.trainwatch.collector.detect.AnomalyKind.RUN_FAILED,
                dev.trainwatch.collector.detect.Severity.CRITICAL, true, clock.seconds() - 60, null,
                "the run failed on rank 0: CUDA out of memory", java.util.Map.of("cause", "cuda_oom"), "s");
        var stale = new dev.trainwatch.collector.detect.Anomaly(
                dev.trainwatch.collector.detect.AnomalyKind.STALLED,
                dev.trainwatch.collector.detect.Severity.WARNING, true, clock.seconds() - 120, null, "m",
                java.util.Map.of(), "s");
        RunSummary summary = new RunSummary("dead", spec("dit-xl-2", 8, null, 500L), clock.seconds() - 3600,
                clock.seconds() - 60, true, clock.seconds() - 60, 400L, clock.seconds() - 70, 1.0, 1.0, 40 * GIB,
                38 * GIB, 0.9, 8.0, List.of("n1"), List.of("GPU-0"), List.of(failed, stale), null, null, null,
                null);
        fleet.restoreRun(Json.MAPPER.readValue(Json.MAPPER.writeValueAsString(summary), RunSummary.class));
        assertThat(fleet.run("dead").orElseThrow().anomalies()).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(dev.trainwatch.collector.detect.AnomalyKind.RUN_FAILED);
            assertThat(a.active()).isTrue();
            assertThat(a.evidence()).containsEntry("cause", "cuda_oom");
        });
    }

    @Test
    void runsNotHeardOfForTheRetentionEndAndAreLaterForgotten() {
        Fleet small = new Fleet(predictor, clock, new FleetSettings(10, 8, 4, Duration.ofMinutes(10), 60, 16,
                Duration.ofSeconds(1), 5, Duration.ofHours(1)), DetectorSettings.defaults());
        List<String> ended = new ArrayList<>();
        small.addListener(new FleetListener() {
            @Override
            public void onRunEnded(RunSummary s) {
                ended.add(s.runId());
            }
        });
        small.ingestSteps("quiet", List.of(StepEvent.of(1, 1.0, clock.seconds())));
        clock.advance(Duration.ofMinutes(59));
        small.tick();
        assertThat(ended).isEmpty();
        clock.advance(Duration.ofMinutes(2));
        small.tick();
        assertThat(ended).containsExactly("quiet");
        assertThat(small.run("quiet").orElseThrow().ended()).isTrue();
        clock.advance(Duration.ofMinutes(61));
        small.tick();
        assertThat(small.run("quiet")).isEmpty();
    }

    @Test
    void specWithoutDataParallelSizeTakesTheAttributedGpuCount() {
        double t = clock.seconds();
        fleet.ingestBatch(batch("n1", "a1", 1, List.of(gpu(t, 0, "GPU-0", GIB, 0.9), gpu(t, 1, "GPU-1", GIB, 0.9),
                gpu(t, 2, "GPU-2", GIB, 0.9)), List.of(attribution("dp", List.of("GPU-0", "GPU-1", "GPU-2"))),
                List.of()));
        RunView v = fleet.putSpec("dp", spec("dit-xl-2", 8, null, null));
        assertThat(v.spec().gpus()).isEqualTo(3);
        assertThat(v.estimate().samplesPerSecond()).isEqualTo(24.0);
    }
}
