package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.ended;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.RunFailure;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** run_failed: raised at once from a failure, joined with what was seen before, kept when the run ends. */
class RunFailedTest {

    private static final long GIB = FakePredictor.GIB;
    private final SettableClock clock = new SettableClock(Instant.parse("2026-06-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    private static RunFailure oom() {
        return new RunFailure("cuda_oom", "CUDA out of memory: tried to allocate 2.00 GiB on GPU 0", 1, null, 0,
                Map.of("tried_to_allocate_bytes", 2L * GIB, "gpu_index", 0),
                List.of("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."));
    }

    private Anomaly failed(String run) {
        return fleet.run(run).orElseThrow().anomalies().stream().filter(a -> a.kind() == AnomalyKind.RUN_FAILED)
                .findFirst().orElseThrow();
    }

    @Test
    void anOomFailureIsCriticalJoinedWithTheObservedMemoryAndSurvivesTheEnd() {
        long seq = 1;
        for (int i = 0; i < 30; i++) {
            clock.advanceSeconds(1);
            fleet.ingestBatch(batch("node1", "a", seq++, List.of(gpu(clock.seconds(), 0, "GPU-0", 79 * GIB, 0.97)),
                    List.of(attribution("oom-run", List.of("GPU-0"))), List.of()));
        }
        fleet.recordFailure("oom-run", oom(), "node1");
        Anomaly a = failed("oom-run");
        assertThat(a.active()).isTrue();
        assertThat(a.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(a.message()).startsWith("the run failed on rank 0: CUDA out of memory")
                .contains("its fullest GPU had reached 79.0 GiB of 80.0 GiB");
        assertThat(a.evidence()).containsEntry("cause", "cuda_oom").containsEntry("host", "node1")
                .containsEntry("tried_to_allocate_bytes", 2L * GIB).containsKey("lines");
        assertThat(a.suggestion()).contains("batch").contains("expandable_segments");
        fleet.endRun("oom-run");
        assertThat(failed("oom-run").active()).as("the failure is what the end was").isTrue();
        assertThat(fleet.run("oom-run").orElseThrow().anomalies()).filteredOn(Anomaly::active).hasSize(1);
    }

    @Test
    void otherProcessesOnTheGpuAreTheFirstThingToFreeAndADivergedLossIsNamedAsSuch() {
        clock.advanceSeconds(1);
        fleet.ingestBatch(batch("node1", "a", 1, List.of(gpu(clock.seconds(), 0, "GPU-0", 23 * GIB, 0.9)),
                List.of(attribution("shared", List.of("GPU-0")), attribution("nan", List.of("GPU-1"))), List.of()));
        // As the agent reads SimpleTuner #786: two other processes hold 558 MiB and 1.03 GiB of the card.
        fleet.recordFailure("shared", new RunFailure("cuda_oom", "CUDA out of memory: tried to allocate 54 MiB", null,
                null, null, Map.of("other_processes", 2, "other_process_pids", "1108671, 1114104",
                        "other_processes_bytes", 1_691_059_487L), List.of("CUDA out of memory.")), "node1");
        Anomaly oom = failed("shared");
        assertThat(oom.evidence()).containsEntry("other_process_pids", "1108671, 1114104");
        assertThat(oom.suggestion()).startsWith("other processes held 1.6 GiB of the GPU (PID 1108671, 1114104)");
        fleet.recordFailure("nan", new RunFailure("exception", "the loss became NaN (the run diverged): loss is nan",
                null, null, null, Map.of("nan_loss", true), List.of("loss is nan")), "node1");
        assertThat(failed("nan").suggestion()).startsWith("the loss diverged to NaN");
    }

    @Test
    void anAgentsFailureAfterItsRunEndedEventIsStillRaised() {
        clock.advanceSeconds(1);
        fleet.ingestBatch(batch("node1", "a", 1, List.of(gpu(clock.seconds(), 0, "GPU-0", 40 * GIB, 0.9)),
                List.of(attribution("r", List.of("GPU-0"))), List.of()));
        clock.advanceSeconds(1);
        RunFailure timeout = new RunFailure("nccl_timeout", "an NCCL collective timed out: ALLREDUCE #77 waited 600 s",
                null, null, 3, Map.of("op", "ALLREDUCE"), List.of("[Rank 3] Watchdog caught collective operation timeout"));
        fleet.ingestBatch(batch("node1", "a", 2, List.of(gpu(clock.seconds(), 0, "GPU-0", 40 * GIB, 0.0)),
                List.of(ended("r", List.of("GPU-0"))), List.of(new AgentEvent(clock.seconds(), "run_ended", null, null,
                        "r", "processes exited", null, null, null, null), new AgentEvent(clock.seconds(), "run_failed", null, null, "r",
                        timeout.summary(), timeout, null, null, null))));
        assertThat(fleet.run("r").orElseThrow().ended()).isTrue();
        Anomaly a = failed("r");
        assertThat(a.active()).isTrue();
        assertThat(a.evidence()).containsEntry("cause", "nccl_timeout").containsEntry("rank", 3);
        assertThat(a.message()).contains("rank 3");
    }

    @Test
    void aRunThatGoesOnAfterAFailureIsNoLongerFailed() {
        clock.advanceSeconds(1);
        fleet.ingestBatch(batch("node1", "a", 1, List.of(gpu(clock.seconds(), 0, "GPU-0", 40 * GIB, 0.9)),
                List.of(attribution("elastic", List.of("GPU-0"))), List.of()));
        fleet.recordFailure("elastic", oom(), "node2");
        assertThat(failed("elastic").active()).isTrue();
        clock.advanceSeconds(30);
        fleet.ingestSteps("elastic", List.of(dev.trainwatch.protocol.StepEvent.of(100, 1.0, clock.seconds())));
        fleet.tick();
        assertThat(failed("elastic").active()).as("training resumed after the failure").isFalse();
    }

    @Test
    void aRunThatEndsWithoutAFailureHasNone() {
        clock.advanceSeconds(1);
        fleet.ingestBatch(batch("node1", "a", 1, List.of(gpu(clock.seconds(), 0, "GPU-0", 40 * GIB, 0.9)),
                List.of(attribution("ok", List.of("GPU-0"))), List.of()));
        fleet.endRun("ok");
        assertThat(fleet.run("ok").orElseThrow().anomalies()).noneMatch(a -> a.kind() == AnomalyKind.RUN_FAILED);
        // A run that failed before it reported anything is created to hold its failure.
        assertThat(fleet.recordFailure("early", oom(), "node1").anomalies())
                .anyMatch(a -> a.kind() == AnomalyKind.RUN_FAILED && a.active());
    }
}
