package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A collector that was away comes back while an agent's spool holds minutes of a run's steps: the agent replays them
 * in order, each request saying when it was sent ({@code Trainwatch-Sent-At}), and its newest steps arrive minutes
 * after they were read. That silence is late data, not a stopped run: {@code stalled} waits while the backlog comes
 * (OperationsIT raised it for three seconds at load 7). Without the send time (an older agent) it cannot be told
 * apart: the control. A run whose agent stops sending altogether is still named once the grace has passed.
 */
class LateStepsTest {
    private final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T08:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    /** Two minutes of a healthy run, a step a second, as a live agent sends them. */
    private long healthy(String run, String agent, boolean sendTime) {
        long step = 0;
        for (int s = 0; s < 120; s++) {
            clock.advanceSeconds(1);
            step++;
            fleet.ingestSteps(run, List.of(StepEvent.of(step, 1.0, clock.seconds())), agent,
                    sendTime ? clock.seconds() : null);
            fleet.tick();
        }
        return step;
    }

    private boolean stalledSeen(String run) {
        return fleet.run(run).orElseThrow().anomalies().stream().anyMatch(a -> a.kind() == AnomalyKind.STALLED);
    }

    /** The collector is away for {@code away} s while the run goes on; then the agent replays, 20 steps a second. */
    private void awayThenReplay(String run, String agent, long from, boolean sendTime, double away) {
        double readFrom = clock.seconds();
        clock.advanceSeconds(away);
        List<StepEvent> backlog = new ArrayList<>();
        for (int i = 1; i <= (int) away; i++) {
            backlog.add(StepEvent.of(from + i, 1.0, readFrom + i));
        }
        for (int i = 0; i < backlog.size(); i += 20) {
            fleet.ingestSteps(run, backlog.subList(i, Math.min(backlog.size(), i + 20)), agent,
                    sendTime ? clock.seconds() : null);
            fleet.tick();
            clock.advanceSeconds(1);
            fleet.tick();
        }
    }

    @Test
    void aBacklogDeliveredAfterTheCollectorWasAwayIsNotAStall() {
        long last = healthy("replayed", "agent-a", true);
        awayThenReplay("replayed", "agent-a", last, true, 200);
        assertThat(stalledSeen("replayed")).isFalse();
        // Then the agent dies: named once the grace is over, as before.
        clock.advanceSeconds(StepIngest.LATE_GRACE_SECONDS + 130);
        fleet.tick();
        assertThat(stalledSeen("replayed")).as("an agent that stopped sending").isTrue();
    }

    @Test
    void withoutTheSendTimeTheSameBacklogLooksLikeAStall() {
        long last = healthy("older", "agent-b", false);
        awayThenReplay("older", "agent-b", last, false, 200);
        assertThat(stalledSeen("older")).as("the control").isTrue();
    }
}
