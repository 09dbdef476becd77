package dev.trainwatch.collector.state;

import dev.trainwatch.collector.state.view.RunView;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.Samples;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A run's latest phase and its progress in the run's view, and ai-toolkit's caught OOMs as a critical
 * {@code oom_risk} while the run goes on (quiet without them, and quiet again ten minutes after the newest).
 */
class PhaseAndCaughtOomTest {
    private static final String RUN = "lora";
    private final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    private long seq;
    private long step;

    private double now() {
        return clock.millis() / 1000.0;
    }

    private void batch(AgentEvent... events) {
        fleet.ingestBatch(Samples.batch("node-a", "agent-a", ++seq,
                List.of(Samples.gpu(now(), 0, "GPU-a", 20L << 30, 0.95)),
                List.of(Samples.attribution(RUN, List.of("GPU-a"))), List.of(events)));
    }

    private static AgentEvent event(double ts, String kind, String message, PhaseProgress progress, Long count) {
        return new AgentEvent(ts, kind, null, null, RUN, message, null, null, progress, count);
    }

    /** {@code seconds} of healthy training: a step and a batch every 5 s, the fleet ticking. */
    private void train(int seconds) {
        for (int t = 0; t < seconds; t += 5) {
            clock.advance(Duration.ofSeconds(5));
            batch();
            fleet.ingestSteps(RUN, List.of(StepEvent.of(++step, 5.0, now())), "agent-a", null);
            fleet.tick();
        }
    }

    private Optional<Anomaly> oomRisk() {
        return fleet.run(RUN).orElseThrow().anomalies().stream()
                .filter(a -> a.active() && a.kind() == AnomalyKind.OOM_RISK).findFirst();
    }

    @Test
    void theLatestPhaseAndItsProgressAreInTheRunsViewUntilTheFirstStep() throws Exception {
        batch(event(now(), "phase", "caching", null, null));
        batch(event(now(), "phase", "caching", new PhaseProgress(504, 14080L, 1 / 1.57), null));
        RunView view = fleet.run(RUN).orElseThrow();
        assertThat(view.phase().kind()).isEqualTo("caching");
        assertThat(view.phase().progress()).isEqualTo(new PhaseProgress(504, 14080L, 1 / 1.57));
        assertThat(Json.MAPPER.writeValueAsString(view))
                .contains("\"phase\":{\"kind\":\"caching\"", "\"progress\":{\"done\":504,\"total\":14080,");
        train(10);
        assertThat(fleet.run(RUN).orElseThrow().phase()).as("training again").isNull();
        assertThat(oomRisk()).isEmpty();
    }

    @Test
    void caughtOomsAreACriticalOomRiskWhileTheRunGoesOn() {
        train(60);
        batch(event(now(), "oom_skipped", "the trainer caught a CUDA OOM and skipped the batch", null, 1L));
        batch(event(now(), "oom_skipped", "the trainer caught a CUDA OOM and skipped the batch", null, 2L));
        train(10);
        Anomaly a = oomRisk().orElseThrow();
        assertThat(a.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(a.message()).startsWith("the trainer caught 2 CUDA OOMs and skipped those batches");
        assertThat(a.evidence()).containsEntry("oom_skipped_batches", 2L);
        assertThat(a.suggestion()).isNotBlank();
    }

    @Test
    void aRunWithoutCaughtOomsIsQuiet() {
        train(300);
        assertThat(oomRisk()).isEmpty();
        assertThat(fleet.run(RUN).orElseThrow().anomalies()).noneMatch(Anomaly::active);
    }

    @Test
    void aRunThatCaughtOneOomAnHourAgoAndIsFineSinceIsQuiet() {
        train(30);
        batch(event(now(), "oom_skipped", "the trainer caught a CUDA OOM and skipped the batch", null, 1L));
        train(10);
        assertThat(oomRisk()).isPresent();
        train(3600);
        assertThat(oomRisk()).isEmpty();
    }

    @Test
    void onceTheTrainerGivesUpItIsTheFailureNotAnOomRisk() {
        train(30);
        batch(event(now(), "oom_skipped", "the trainer caught a CUDA OOM and skipped the batch", null, 3L));
        train(10);
        assertThat(oomRisk()).isPresent();
        // The agent reports the failure and the end together, as it does when the trainer raises.
        clock.advance(Duration.ofSeconds(5));
        fleet.ingestBatch(Samples.batch("node-a", "agent-a", ++seq, List.of(Samples.gpu(now(), 0, "GPU-a", 0, 0)),
                List.of(Samples.ended(RUN, List.of("GPU-a"))), List.of(
                        new AgentEvent(now(), "run_failed", null, null, RUN, "RuntimeError", new RunFailure("exception",
                                "RuntimeError: OOM during training step 3 times in a row, aborting training", 1, null,
                                0, Map.of(), List.of()), null, null, null),
                        new AgentEvent(now(), "run_ended", null, null, RUN, "exited", null, null, null, null))));
        fleet.tick();
        assertThat(oomRisk()).isEmpty();
        assertThat(fleet.run(RUN).orElseThrow().anomalies())
                .anyMatch(a -> a.active() && a.kind() == AnomalyKind.RUN_FAILED);
    }
}
