package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.EventKind;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.testing.Samples;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An agent speaks for the runs on its own node: another node's batch cannot fail, end or phase them. */
class OwnHostEventsTest {
    private final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    private static RunFailure failure() {
        return new RunFailure("exception", "ValueError: x", 1, null, 0, Map.of("type", "ValueError"),
                List.of("ValueError: x"));
    }

    private boolean failed(String runId) {
        return fleet.run(runId).orElseThrow().anomalies().stream()
                .anyMatch(a -> a.active() && a.kind() == AnomalyKind.RUN_FAILED);
    }

    @Test
    void anotherNodesBatchCannotFailOrEndARun() {
        double ts = clock.millis() / 1000.0;
        fleet.ingestBatch(Samples.batch("node-a", "agent-a", 1, List.of(Samples.gpu(ts, 0, "GPU-a", 1L << 30, 0.9)),
                List.of(Samples.attribution("run-x", List.of("GPU-a"))), List.of()));

        fleet.ingestBatch(Samples.batch("node-b", "agent-b", 1, List.of(), List.of(), List.of(
                new AgentEvent(ts, EventKind.RUN_FAILED.wireName(), null, null, "run-x", null, failure(), null, null, null),
                new AgentEvent(ts, EventKind.RUN_ENDED.wireName(), null, null, "run-x", null, null, null, null, null),
                new AgentEvent(ts, EventKind.PHASE.wireName(), null, null, "run-x", "checkpoint", null, null, null, null))));
        RunView x = fleet.run("run-x").orElseThrow();
        assertThat(failed("run-x")).as("failed by another node's batch").isFalse();
        assertThat(x.ended()).isFalse();
        assertThat(x.hosts()).containsExactly("node-a");

        // The run's own node may.
        fleet.ingestBatch(Samples.batch("node-a", "agent-a", 2, List.of(), List.of(), List.of(
                new AgentEvent(ts, EventKind.RUN_FAILED.wireName(), null, null, "run-x", null, failure(), null, null, null))));
        assertThat(failed("run-x")).isTrue();
        fleet.ingestBatch(Samples.batch("node-a", "agent-a", 3, List.of(), List.of(), List.of(
                new AgentEvent(ts, EventKind.RUN_ENDED.wireName(), null, null, "run-x", null, null, null, null, null))));
        assertThat(fleet.run("run-x").orElseThrow().ended()).isTrue();
    }
}
