package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.RunEnding;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: a DiT run whose processes vanished (its traceback on stderr, its log.txt ending in steps) was shown as a
 * clean end. It ends "without a cause in the log", with the output to point --log at.
 */
class RunEndingTest {

    private final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    private void trainThenEnd(String runId, List<AgentEvent> endEvents) {
        fleet.ingestBatch(batch("node1", "agent-1", 1, List.of(), List.of(attribution(runId, List.of())), List.of()));
        fleet.ingestSteps(runId, List.of(new StepEvent(100L, 0.5, null, null, null, null, 100, null, 0.2, null, null,
                null, null, null, clock.seconds(), null)));
        clock.advanceSeconds(5);
        fleet.ingestBatch(batch("node1", "agent-1", 2, List.of(), List.of(), endEvents));
    }

    @Test
    void anEndWithoutACauseInTheLogSaysSoAndWhereTheOutputWent() {
        trainThenEnd("dit", List.of(new AgentEvent(clock.seconds(), "run_ended", null, null, "dit", "exited", null,
                new RunEnding("/runs/000-DiT/log.txt", false, "(step=0000100) Train Loss: 0.2",
                        List.of("/runs/job.err")), null, null)));
        RunView v = fleet.run("dit").orElseThrow();
        assertThat(v.ended()).isTrue();
        assertThat(v.ending().message()).startsWith("ended without a cause in the log (/runs/000-DiT/log.txt)")
                .contains("/runs/job.err").contains("point --log at it");
        assertThat(v.ending().outputs()).containsExactly("/runs/job.err");
    }

    @Test
    void aFailureOrACauseInTheLogIsNoUnexplainedEnd() {
        RunFailure oom = new RunFailure("cuda_oom", "CUDA out of memory", null, null, 1, Map.of(), List.of("OOM"));
        trainThenEnd("failed", List.of(
                new AgentEvent(clock.seconds(), "run_ended", null, null, "failed", "exited", null,
                        new RunEnding("/runs/log.txt", true, "torch.OutOfMemoryError", List.of()), null, null),
                new AgentEvent(clock.seconds(), "run_failed", null, null, "failed", oom.summary(), oom, null, null, null)));
        assertThat(fleet.run("failed").orElseThrow().ending()).isNull();
    }

    @Test
    void aRequeuedRunDoesNotInheritHowTheLastAttemptEnded() {
        trainThenEnd("job", List.of(new AgentEvent(clock.seconds(), "run_ended", null, null, "job", "exited", null,
                new RunEnding("/runs/job/log.txt", false, "step 100", List.of("/runs/job.err")), null, null)));
        assertThat(fleet.run("job").orElseThrow().ending()).isNotNull();
        fleet.stopping("job", "SIGINT");
        clock.advanceSeconds(60);
        // Slurm requeues the job under the same run id: it reports again, then ends with nothing said about how.
        fleet.ingestBatch(batch("node1", "agent-1", 3, List.of(), List.of(attribution("job", List.of())), List.of()));
        assertThat(fleet.run("job").orElseThrow().ended()).isFalse();
        clock.advanceSeconds(5);
        RunView second = fleet.endRun("job").orElseThrow();
        assertThat(second.ended()).isTrue();
        assertThat(second.ending()).as("the first attempt's ending and its user's stop").isNull();
    }
}
