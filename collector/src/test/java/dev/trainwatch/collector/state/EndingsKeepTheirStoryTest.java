package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a run's end is told: what was wrong ends with it, unfixed; a run its user stopped is stopped, not failed. */
class EndingsKeepTheirStoryTest {

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    private final List<String> heard = new ArrayList<>();

    EndingsKeepTheirStoryTest() {
        fleet.addListener(new FleetListener() {
            @Override
            public void onAnomalyRaised(String runId, Anomaly a) {
                heard.add("raised " + a.kind().wireName() + " " + a.severity().wireName());
            }

            @Override
            public void onAnomalyResolved(String runId, Anomaly a) {
                heard.add((a.endedWithRun() ? "ended with run " : "resolved ") + a.kind().wireName());
            }
        });
    }

    private void xidOn(String runId) {
        double t = clock.seconds();
        fleet.ingestBatch(batch("n1", "a1", 1, List.of(gpu(t, 0, "GPU-0", 10L << 30, 0.9)),
                List.of(attribution(runId, List.of("GPU-0"))),
                List.of(new AgentEvent(t, "xid", "GPU-0", 79L, null, "fell off the bus", null, null, null, null))));
        clock.advance(Duration.ofSeconds(2));
        fleet.tick();
    }

    @Test
    void anAnomalyActiveAtTheEndEndsWithTheRunAndIsNeverResolved() {
        xidOn("job");
        assertThat(heard).contains("raised xid_error critical");

        RunView ended = fleet.endRun("job").orElseThrow();

        assertThat(heard).contains("ended with run xid_error").doesNotContain("resolved xid_error");
        assertThat(ended.anomalies()).filteredOn(a -> a.kind() == AnomalyKind.XID_ERROR).singleElement()
                .satisfies(a -> {
                    assertThat(a.active()).isFalse();
                    assertThat(a.endedWithRun()).isTrue();
                });
    }

    @Test
    void aLossThatWentNanInTheLastLinesIsJudgedBeforeTheRunEnds() {
        // `trainwatch run` with a command that printed its NaN and exited at once: the last poll delivers the lines,
        // the run ends before any tick. The verdict is the divergence, not "ok".
        for (int i = 1; i <= 4; i++) {
            // The healthy steps are judged as they arrive; the NaN ones come within the run's evaluation spacing.
            fleet.ingestSteps("nan-run", List.of(new StepEvent((long) i * 10, 2.0, 0.1, null, null, null, 10, null,
                    i <= 2 ? 0.12 : Double.NaN, 2e-5, null, null, null, null, clock.seconds(), null)));
            clock.advance(Duration.ofMillis(100));
        }
        assertThat(heard).isEmpty();

        RunView ended = fleet.endRun("nan-run").orElseThrow();

        assertThat(heard).contains("raised loss_nonfinite critical", "ended with run loss_nonfinite");
        assertThat(ended.anomalies()).filteredOn(a -> a.kind() == AnomalyKind.LOSS_NONFINITE).singleElement()
                .satisfies(a -> assertThat(a.endedWithRun()).isTrue());
    }

    @Test
    void aHealthyRunThatEndsAtOnceEndsWithNothingRaised() {
        double t = clock.seconds();
        fleet.ingestSteps("fine", List.of(new StepEvent(10L, 2.0, 0.1, null, null, null, 10, null, 0.12, 2e-5, null,
                null, null, null, t, null)));

        RunView ended = fleet.endRun("fine").orElseThrow();

        assertThat(heard).isEmpty();
        assertThat(ended.anomalies()).isEmpty();
    }

    @Test
    void aRunItsUserStoppedEndsStoppedWithoutRunFailed() {
        fleet.ingestBatch(batch("n1", "a1", 1, List.of(gpu(clock.seconds(), 0, "GPU-0", 10L << 30, 0.9)),
                List.of(attribution("job", List.of("GPU-0"))), List.of()));
        fleet.stopping("job", "SIGINT");
        // The traceback a Ctrl-C leaves, classified by an agent that read the log: not a failure of a stopped run.
        fleet.recordFailure("job", new RunFailure("signal", "KeyboardInterrupt", 130, 2, null, Map.of(), List.of()),
                "n1");
        clock.advance(Duration.ofSeconds(2));
        fleet.tick();

        RunView ended = fleet.endRun("job").orElseThrow();

        assertThat(heard).noneMatch(h -> h.contains("run_failed"));
        assertThat(ended.anomalies()).noneMatch(a -> a.kind() == AnomalyKind.RUN_FAILED);
        assertThat(ended.ending()).isNotNull();
        assertThat(ended.ending().message()).startsWith("was stopped by its user (SIGINT");
    }

    @Test
    void aFailureOfARunNobodyStoppedStillRaisesRunFailed() {
        fleet.recordFailure("job", new RunFailure("signal", "killed by SIGKILL", 137, 9, null, Map.of(), List.of()),
                "n1");
        assertThat(heard).contains("raised run_failed critical");
        assertThat(fleet.endRun("job").orElseThrow().ending()).isNull();
    }
}
