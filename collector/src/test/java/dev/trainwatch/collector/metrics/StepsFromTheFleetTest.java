package dev.trainwatch.collector.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The step-time summary is fed by the fleet, not by the HTTP handler: steps that reach the fleet by any path (a direct
 * call, an agent's batch, the same batch replayed) are counted in {@code trainwatch_run_step_seconds} exactly once.
 */
class StepsFromTheFleetTest {

    private static List<StepEvent> steps(int from, int to, double seconds) {
        List<StepEvent> out = new ArrayList<>();
        for (int step = from; step <= to; step++) {
            out.add(new StepEvent((long) step, seconds, null, null, null, null, 1, null, null, null, null, null, null,
                    null, null, null));
        }
        return out;
    }

    @Test
    void stepsIngestedWithoutHttpAreCountedOnce() {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(spec -> null, clock, FleetSettings.defaults(), DetectorSettings.defaults());
        MetricsExporter metrics = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, false);
        fleet.addListener(metrics.runs());

        clock.advanceSeconds(10);
        fleet.ingestSteps("direct", steps(1, 5, 2.0));
        AgentBatch batch = new AgentBatch("node-1", "agent-1", 1, List.of(), List.of(), List.of(), null, null,
                clock.seconds(), List.of(new RunSteps("batched", steps(1, 3, 4.0))));
        fleet.ingestBatch(batch);
        fleet.ingestBatch(batch); // the same batch again (a retry): applied once

        String scrape = metrics.scrape();
        assertThat(scrape).contains("trainwatch_run_step_seconds_count{run_id=\"direct\"} 5\n")
                .contains("trainwatch_run_step_seconds_sum{run_id=\"direct\"} 10.0\n")
                .contains("trainwatch_run_step_seconds_count{run_id=\"batched\"} 3\n")
                .contains("trainwatch_run_step_seconds_sum{run_id=\"batched\"} 12.0\n");
    }
}
