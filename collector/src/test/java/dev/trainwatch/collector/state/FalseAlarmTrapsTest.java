package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * False-alarm traps that must stay silent. A healthy run, the collector restarted from its history while the agent spooled, the agent
 * replaying two minutes of old batches and steps on reconnect, then live data again. Nothing may be raised.
 */
class FalseAlarmTrapsTest {
    private static final long GIB = FakePredictor.GIB;
    private static final RunSpec SPEC = new RunSpec("pixart-sigma-xl-2", null, 4, 8, 1024, null, null, null, "bf16",
            "adamw", true, false, "precomputed", 0, null, null, 100_000L);

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));

    private final class Raised implements FleetListener {
        final List<String> raised = new ArrayList<>();

        @Override
        public void onAnomalyRaised(String runId, Anomaly anomaly) {
            raised.add(runId + " " + anomaly.kind().wireName() + ": " + anomaly.message());
        }
    }

    private static AgentBatch poll(long seq, double ts) {
        List<dev.trainwatch.protocol.GpuSample> gpus = new ArrayList<>();
        List<String> uuids = new ArrayList<>();
        for (int g = 0; g < 4; g++) {
            gpus.add(gpu(ts, g, "GPU-" + g, 36 * GIB + g * 100_000_000L, 0.93));
            uuids.add("GPU-" + g);
        }
        return batch("node1", "agent-1", seq, gpus, List.of(attribution("healthy", uuids)), List.of());
    }

    /** One second of a healthy run at the predicted pace (FakePredictor: 1.0 s per step, 38 GiB peak). */
    private static void second(Fleet fleet, long seq, double ts) {
        fleet.ingestBatch(poll(seq, ts));
        fleet.ingestSteps("healthy", List.of(StepEvent.of(seq, 1.0, ts)));
    }

    @Test
    void aRestartedCollectorReplayingTheAgentsSpoolRaisesNothing() {
        Fleet before = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        Raised first = new Raised();
        before.addListener(first);
        before.putSpec("healthy", SPEC);
        long seq = 0;
        for (int t = 0; t < 300; t++) {
            clock.advance(Duration.ofSeconds(1));
            second(before, ++seq, clock.seconds());
            before.tick();
        }
        assertThat(first.raised).as("the healthy run before the restart").isEmpty();
        RunSummary summary = before.summary("healthy").orElseThrow();

        // Two minutes down; the agent spools one batch and one step a second meanwhile.
        double downFrom = clock.seconds();
        clock.advance(Duration.ofSeconds(120));
        Fleet after = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        Raised second = new Raised();
        after.addListener(second);
        after.restoreRun(summary);
        after.tick();
        // The spool replays oldest first, as fast as the collector takes it, with the old timestamps.
        for (int t = 1; t <= 120; t++) {
            second(after, ++seq, downFrom + t);
        }
        after.tick();
        for (int t = 0; t < 300; t++) {
            clock.advance(Duration.ofSeconds(1));
            second(after, ++seq, clock.seconds());
            after.tick();
        }
        assertThat(second.raised).as("after the restart and the replay").isEmpty();
        assertThat(after.run("healthy").orElseThrow().observed().lastStep()).isEqualTo(seq);
    }

    @Test
    void aMisSpecifiedBatchRunningFasterAndSmallerThanPredictedRaisesNothing() {
        // The spec says batch 12; the run trains at batch 4: 0.37x the predicted step time, far less memory.
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        Raised raised = new Raised();
        fleet.addListener(raised);
        fleet.putSpec("healthy", SPEC.overriddenBy(new RunSpec(null, null, null, 12, null, null, null, null, null,
                null, null, null, null, null, null, null, null)));
        for (int t = 1; t <= 600; t++) {
            clock.advance(Duration.ofSeconds(1));
            double ts = clock.seconds();
            List<dev.trainwatch.protocol.GpuSample> gpus = new ArrayList<>();
            for (int g = 0; g < 4; g++) {
                gpus.add(gpu(ts, g, "GPU-" + g, 14 * GIB, 0.9));
            }
            fleet.ingestBatch(batch("node1", "agent-1", t, gpus, List.of(attribution("healthy",
                    List.of("GPU-0", "GPU-1", "GPU-2", "GPU-3"))), List.of()));
            fleet.ingestSteps("healthy", List.of(StepEvent.of(t, 0.37, ts)));
            fleet.tick();
        }
        assertThat(raised.raised).isEmpty();
        assertThat(fleet.run("healthy").orElseThrow().comparison().stepTimeRatio()).isLessThan(0.5);
    }
}
