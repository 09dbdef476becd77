package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.RunGpuView;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FleetRobustnessTest {

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    @Test
    void recordsWithEveryOptionalFieldMissingAreAcceptedAndHarmless() {
        GpuSample bare = new GpuSample(Double.NaN, 0, "GPU-bare", null, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, null, null);
        GpuSample absurd = new GpuSample(-5, 1, "GPU-absurd", "x", null, -1L, -7L, null, null, 42.0, null, null, -1L,
                0L, null, null, Arrays.asList("no_such_reason", null), Double.POSITIVE_INFINITY, null, null,
                Double.NaN, null, Arrays.asList((dev.trainwatch.protocol.GpuProcess) null), null, null);
        List<RunAttribution> runs = Arrays.asList(null, new RunAttribution(null, null, null, null, null, null, null, null, null, null, null),
                new RunAttribution("r", null, Arrays.asList("GPU-bare", null, ""), Arrays.asList(null,
                        new RankInfo(1, null, null, null, null), new RankInfo(2, 3, 0, 4, List.of("GPU-bare"))),
                        null, null, null, null, null, null, null));
        List<AgentEvent> events = Arrays.asList(null, new AgentEvent(0, (String) null, null, null, null, null, null, null, null, null),
                new AgentEvent(0, "xid", null, null, null, null, null, null, null, null), new AgentEvent(0, "xid", "GPU-new", 79L, null, null, null, null, null, null),
                new AgentEvent(0, "gpu_lost", "GPU-unknown", null, null, null, null, null, null, null),
                new AgentEvent(0, "run_ended", null, null, "nope", null, null, null, null, null), new AgentEvent(0, "future_kind", null, null,
                        null, null, null, null, null, null));
        AgentBatch batch = new AgentBatch("h", "a", 1, Arrays.asList(null, bare, absurd), runs, events, null, null, null, null);
        for (int i = 0; i < 30; i++) {
            clock.advance(Duration.ofSeconds(1));
            fleet.ingestBatch(new AgentBatch("h", "a", i + 1, batch.gpus(), runs, events, null, null, null, null));
            fleet.ingestSteps("r", Arrays.asList(null, new StepEvent(5L, 1.0, -3.0, Double.NaN, null, null, -4,
                    Double.NaN, null, null, null, -1, 0, -2, Double.NaN, null)));
            fleet.tick();
        }
        RunView v = fleet.run("r").orElseThrow();
        assertThat(v.gpus()).extracting(RunGpuView::uuid).containsExactly("GPU-bare");
        assertThat(v.gpus().get(0).ranks()).containsExactly(3);
        assertThat(v.observed().lastStep()).isEqualTo(5);
        assertThat(v.observed().dataWaitRatio()).isNull();
        assertThat(fleet.gpus()).extracting(GpuView::uuid).contains("GPU-bare", "GPU-absurd");
        GpuView absurdView = fleet.gpus().stream().filter(g -> g.uuid().equals("GPU-absurd")).findFirst()
                .orElseThrow();
        assertThat(absurdView.idleSeconds()).isZero();
    }

    @Test
    void aClockSteppedBackDoesNotHoldARunsSummaryUntilItCatchesUp() {
        List<Long> sent = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onRunChanged(RunSummary summary) {
                sent.add(summary.lastStep());
            }
        });
        fleet.ingestSteps("r", List.of(StepEvent.of(1, 1.0, clock.seconds())));
        clock.advance(Duration.ofHours(-1)); // NTP steps the clock back an hour
        fleet.ingestSteps("r", List.of(StepEvent.of(2, 1.0, clock.seconds())));
        assertThat(sent).as("sent at once, not an hour later").containsExactly(1L, 2L);
        // From the new time on, the summary interval paces the run again.
        clock.advance(Duration.ofMillis(500));
        fleet.ingestSteps("r", List.of(StepEvent.of(3, 1.0, clock.seconds())));
        assertThat(sent).containsExactly(1L, 2L);
        clock.advance(FleetSettings.DEFAULT_SUMMARY_INTERVAL);
        fleet.tick();
        assertThat(sent).containsExactly(1L, 2L, 3L);
    }

    @Test
    void aClockSteppedBackDoesNotFreezeTheDetectorsUntilItCatchesUp() {
        fleet.ingestSteps("r", List.of(StepEvent.of(1, 1.0, clock.seconds()))); // evaluated now
        clock.advance(Duration.ofHours(-1)); // NTP steps the clock back an hour
        for (int step = 2; step <= 40; step++) {
            clock.advance(Duration.ofSeconds(1));
            fleet.ingestSteps("r", List.of(StepEvent.of(step, 1.0, clock.seconds())));
        }
        // The training hangs: no step for five minutes of ticks.
        for (int i = 0; i < 30; i++) {
            clock.advance(Duration.ofSeconds(10));
            fleet.tick();
        }
        assertThat(fleet.run("r").orElseThrow().anomalies())
                .anySatisfy(a -> {
                    assertThat(a.kind()).isEqualTo(dev.trainwatch.collector.detect.AnomalyKind.STALLED);
                    assertThat(a.active()).isTrue();
                });
    }

    @Test
    void concurrentIngestTickAndReadsKeepCountsAndListenersMayCallBack() throws Exception {
        AtomicInteger callbacks = new AtomicInteger();
        fleet.addListener(new FleetListener() {
            @Override
            public void onRunChanged(RunSummary s) {
                fleet.run(s.runId()); // re-entrant read from a listener must not deadlock
                callbacks.incrementAndGet();
            }

            @Override
            public void onAnomalyRaised(String runId, Anomaly a) {
                fleet.runs();
            }
        });
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> futures = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            int worker = w;
            futures.add(pool.submit(() -> {
                for (int i = 1; i <= 300; i++) {
                    double t = clock.seconds();
                    String uuid = "GPU-" + worker;
                    fleet.ingestBatch(new AgentBatch("h" + worker, "agent-" + worker, i,
                            List.of(new GpuSample(t, 0, uuid, "NVIDIA A100-SXM4-80GB", null, 80L << 30, 40L << 30,
                                    null, null, 0.9, null, null, null, null, null, null, List.of(), null, null, null,
                                    null, null, List.of(), false, null)),
                            List.of(new RunAttribution("run-" + worker, List.of(1L), List.of(uuid), List.of(), null,
                                    false, null, null, null, null, null)), List.of(), null, null, null, null));
                    fleet.ingestSteps("run-" + worker, List.of(StepEvent.of(i, 1.0, t)));
                }
            }));
        }
        futures.add(pool.submit(() -> {
            for (int i = 0; i < 300; i++) {
                clock.advance(Duration.ofMillis(500));
                fleet.tick();
                fleet.gpus();
                fleet.agents();
            }
        }));
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(fleet.agents()).hasSize(3).allSatisfy(a -> {
            assertThat(a.batches()).isEqualTo(300);
            assertThat(a.lastSeq()).isEqualTo(300);
        });
        assertThat(fleet.runs()).hasSize(3).allSatisfy(r -> assertThat(r.observed().lastStep()).isEqualTo(300));
        assertThat(callbacks.get()).isGreaterThanOrEqualTo(3);
    }
}
