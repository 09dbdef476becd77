package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An agent restarted on a node whose clock is 15 minutes behind: its requests' send times say so from the first
 * one, and the run's steps, stamped on that clock, are not taken as 15 minutes old — no false {@code stalled}.
 */
@Timeout(60)
class AgentClockBehindTest {

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    private final List<String> raised = new ArrayList<>();

    @Test
    void aRestartWithTheClockFifteenMinutesBehindRaisesNoStall() {
        fleet.addListener(new FleetListener() {
            @Override
            public void onAnomalyRaised(String runId, Anomaly anomaly) {
                raised.add(anomaly.kind().wireName());
            }
        });
        long seq = 0;
        long step = 0;
        for (int second = 0; second < 240; second++) {
            // From minute two on, the agent runs again on a clock 15 minutes behind the collector's.
            double agentClock = clock.seconds() - (second >= 120 ? 900 : 0);
            fleet.ingestBatch(batch("node-1", "agent-a", ++seq,
                    List.of(gpu(agentClock, 0, "GPU-0", 40L << 30, 0.95)),
                    List.of(attribution("run-1", List.of("GPU-0"))), List.of()), agentClock);
            fleet.ingestSteps("run-1", List.of(StepEvent.of(++step, 1.0, agentClock)), "agent-a", agentClock);
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(raised).doesNotContain("stalled");
        assertThat(fleet.agents()).singleElement()
                .satisfies(a -> assertThat(a.clockOffsetSeconds()).isCloseTo(-900, within(2.0)));
    }
}
