package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An 8-rank run whose every rank posts each step (as the agent does for Open-Sora's timer lines): the step-time
 * summary counts steps, not reports, so {@code rate(trainwatch_run_step_seconds_count)} is the run's step rate.
 */
class RankedStepsMetricsTest {

    @Test
    void theStepSummaryCountsEachStepOnceWhenEveryRankReportsIt() throws Exception {
        try (RunningCollector collector = RunningCollector.start()) {
            for (int step = 1; step <= 20; step++) {
                collector.clock.advanceSeconds(3);
                List<StepEvent> ranks = new ArrayList<>();
                for (int rank = 7; rank >= 0; rank--) {
                    ranks.add(new StepEvent((long) step, 3.0, 0.05, null, null, null, 1, null, null, null, null,
                            null, null, rank, null, null));
                }
                var response = collector.postJson("/v1/runs/os8/steps", Json.MAPPER.writeValueAsBytes(ranks));
                assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
                // Every report was accepted (kept per rank), whether or not it counts as a step.
                assertThat(Json.MAPPER.readTree(response.body()).get("accepted").asInt()).isEqualTo(8);
            }
            // The first scrape shows every step, each counted once.
            assertThat(collector.get("/metrics").body())
                    .contains("trainwatch_run_step_seconds_count{run_id=\"os8\"} 20\n")
                    .contains("trainwatch_run_step_seconds_sum{run_id=\"os8\"} 60.0\n");
            JsonNode run = Json.MAPPER.readTree(collector.get("/v1/runs/os8").body());
            assertThat(run.at("/observed/step_seconds").asDouble()).isEqualTo(3.0);
            assertThat(run.at("/observed/last_step").asLong()).isEqualTo(20);
            assertThat(run.at("/observed/ranks")).hasSize(8);
            assertThat(run.at("/observed/ranks/0/lead").asBoolean()).isTrue();
            assertThat(run.at("/observed/ranks/7/rank").asInt()).isEqualTo(7);
            assertThat(run.at("/observed/ranks/7/step_seconds").asDouble()).isEqualTo(3.0);
            assertThat(run.at("/observed/ranks/7").has("lead")).isFalse();
        }
    }
}
