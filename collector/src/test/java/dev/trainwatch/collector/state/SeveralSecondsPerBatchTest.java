package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import dev.trainwatch.protocol.testing.Samples;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An agent that sends several seconds of its 1-Hz readings (and of its steps) in one request ({@code trainwatch agent
 * --ship-every}; docs/PERFORMANCE.md, "Collector: over HTTP"): once the last batch is in, the fleet
 * must know what it knows when every second came in its own batch — the same windows, memory, utilisation, energy,
 * goodput ledger and step figures — and raise nothing on a healthy run either way.
 */
class SeveralSecondsPerBatchTest {

    private static final int GPUS = 8;
    /** One second, then 300 more: whole batches of 5 and of 10 after the first poll sent alone. */
    private static final int SECONDS = 301;
    private static final String RUN = "run-batched";

    @Test
    void fiveSecondsInOneBatchLeaveTheFleetWhereFiveBatchesDo() {
        sameFleet(5);
    }

    /** The longest an agent holds readings ({@code --ship-every 10s}): still the same fleet, still quiet. */
    @Test
    void tenSecondsInOneBatchLeaveTheFleetWhereTenBatchesDo() {
        sameFleet(10);
    }

    /**
     * The agent sends a run's first poll alone (the attribution changed) and then {@code every} polls at a time:
     * the collector ends where one batch a second leaves it, ledger included.
     */
    private static void sameFleet(int every) {
        Fleet single = replay(1, true);
        Fleet batched = replay(every, true);

        RunView a = single.run(RUN).orElseThrow();
        RunView b = batched.run(RUN).orElseThrow();
        assertThat(b.observed()).isEqualTo(a.observed());
        assertThat(b.gpus()).isEqualTo(a.gpus());
        assertThat(b.anomalies()).isEqualTo(a.anomalies()).isEmpty();
        assertThat(batched.gpus()).isEqualTo(single.gpus());
        assertThat(a.observed().lastStep()).isEqualTo((long) SECONDS);
    }

    /**
     * Without the agent's first poll sent alone, the run's ledger (energy, GPU-hours, wall time by reason), which
     * covers the time since the collector first saw the run (RunState.accounting), misses the readings taken before
     * the first batch arrived: 4 seconds of the 5 here. That is why the agent sends a run's first poll at once.
     */
    @Test
    void aFirstBatchOfFiveSecondsWouldLeaveFourOutOfTheLedger() {
        RunView a = replay(1, false).run(RUN).orElseThrow();
        RunView b = replay(5, false).run(RUN).orElseThrow();
        assertThat(withoutLedger(b.observed())).isEqualTo(withoutLedger(a.observed()));
        assertThat(b.observed().accountedSinceTs() - a.observed().accountedSinceTs()).isCloseTo(4.0, within(1e-6));
        assertThat(a.observed().energyJoules() - b.observed().energyJoules()).isCloseTo(GPUS * 4 * 300.0,
                within(1e-6));
        assertThat(a.observed().gpuHours() - b.observed().gpuHours()).isCloseTo(GPUS * 4 / 3600.0, within(1e-9));
    }

    /** The view without the run's ledger, which starts with its first batch. */
    private static ObservedView withoutLedger(ObservedView o) {
        return new ObservedView(o.peakMemoryBytes(), o.memoryUsedBytes(), o.memoryTotalBytes(), o.stepSeconds(),
                o.dataWaitRatio(), o.textEncoderRatio(), o.vaeRatio(), o.gpuUtilizationRatio(), o.samplesPerSecond(),
                o.lastStep(), o.lastStepTs(), o.largestBucketHeightPx(), o.largestBucketWidthPx(), o.gpuCount(),
                o.powerWatts(), o.ranks(), o.mfuRatio(), o.hfuRatio(), null, null, null, o.cost(), null, null,
                o.loss(), o.lossNonfinite(), o.lossNonfiniteReports(), o.specMismatch(), o.smActiveRatio(),
                o.hardwareMfuRatio());
    }

    /**
     * A healthy run's five minutes, sent every {@code every} seconds (after the first second alone when
     * {@code firstAlone}, as the agent does); ticks every second as the server does.
     */
    private static Fleet replay(int every, boolean firstAlone) {
        SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        double t0 = clock.seconds();
        List<String> uuids = new ArrayList<>();
        for (int g = 0; g < GPUS; g++) {
            uuids.add("GPU-" + g);
        }
        List<GpuSample> held = new ArrayList<>();
        List<StepEvent> heldSteps = new ArrayList<>();
        long seq = 0;
        for (int s = 1; s <= SECONDS; s++) {
            double t = t0 + s;
            for (int g = 0; g < GPUS; g++) {
                held.add(sample(t, g, uuids.get(g), s));
            }
            heldSteps.add(new StepEvent((long) s, 0.95 + 0.01 * (s % 5), 0.05, null, null, null, 1, 64.0,
                    2.0 - s / 1000.0, 1e-4, 1.1, null, null, null, t, null));
            clock.setSeconds(t + 0.3);
            if (s == SECONDS || (firstAlone ? s == 1 || (s - 1) % every == 0 : s % every == 0)) {
                RunAttribution run = Samples.attribution(RUN, uuids);
                fleet.ingestBatch(new AgentBatch("node-1", "agent-1", ++seq, List.copyOf(held), List.of(run),
                        List.of(), new AgentHealth(0.002, 0L, 0L, 0L, 0L, 1.0), null, null, null));
                fleet.ingestSteps(RUN, List.copyOf(heldSteps));
                held.clear();
                heldSteps.clear();
            }
            clock.setSeconds(t + 1);
            fleet.tick();
        }
        return fleet;
    }

    private static GpuSample sample(double ts, int index, String uuid, int second) {
        double util = 0.9 + 0.01 * ((second + index) % 7);
        long used = 60L * FakePredictor.GIB + (second % 13) * (1L << 20);
        UtilizationWindow w = new UtilizationWindow(6, util - 0.05, util, Math.min(1, util + 0.02), 0.0, ts - 1, ts);
        return new GpuSample(ts, index, uuid, "NVIDIA A100-SXM4-80GB", null, FakePredictor.A100_80GB, used, null,
                FakePredictor.A100_80GB - used, util, 0.4, w, 1_410_000_000L, 1_410_000_000L, null, null, List.of(),
                300.0 + index, 400.0, 1.0e6 + 300.0 * second, 60.0, 0, List.of(), false, null);
    }
}
