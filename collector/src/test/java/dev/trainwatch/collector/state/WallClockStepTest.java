package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.MonotonicClock;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The collector host's wall clock is stepped while a healthy run reports (issue 19: "ages, timeouts and sustain
 * windows on a monotonic clock"): NTP corrects a clock an hour off, or an operator sets it. The fleet runs on a
 * {@link MonotonicClock}, so no age jumps: nothing is raised, and the times exported to Prometheus follow the wall
 * clock (its {@code time()} minus the agent's last-seen time stays a second or two). The same run on a plain wall
 * clock raises {@code agent_lost} and {@code stalled} at the step (the control that shows the test can fail).
 */
class WallClockStepTest {
    private static final long GIB = FakePredictor.GIB;
    private static final RunSpec SPEC = new RunSpec("pixart-sigma-xl-2", null, 4, 8, 1024, null, null, null, "bf16",
            "adamw", true, false, "precomputed", 0, null, null, 100_000L);
    private static final long START = Instant.parse("2026-03-01T08:00:00Z").getEpochSecond() * 1_000_000_000L;

    /** The collector host's two clocks: monotonic nanoseconds, and the wall clock, which can be stepped. */
    private final AtomicLong mono = new AtomicLong(42_000_000_000L);
    private final AtomicLong wallStep = new AtomicLong();

    private long wallNanos() {
        return START + mono.get() + wallStep.get();
    }

    private final class Raised implements FleetListener {
        final List<String> raised = new ArrayList<>();

        @Override
        public void onAnomalyRaised(String runId, Anomaly anomaly) {
            raised.add(anomaly.kind().wireName() + ": " + anomaly.message());
        }
    }

    /** A plain wall clock over the same host clocks: what the collector used before. */
    private final class WallClock extends Clock {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            long n = wallNanos();
            return Instant.ofEpochSecond(n / 1_000_000_000L, n % 1_000_000_000L);
        }
    }

    /**
     * Six minutes of a healthy 4-GPU run, one batch and one step report a second from an agent whose clock is right
     * (NTP-synchronised, its own clock untouched); at minute three the collector's wall clock is stepped by
     * {@code stepSeconds}.
     */
    private List<String> play(Clock collectorClock, long stepSeconds, MetricsExporter[] exporter, Fleet[] out) {
        Fleet fleet = new Fleet(new FakePredictor(), collectorClock, FleetSettings.defaults(),
                DetectorSettings.defaults());
        Raised raised = new Raised();
        fleet.addListener(raised);
        fleet.putSpec("healthy", SPEC);
        long seq = 0;
        for (int t = 0; t < 360; t++) {
            mono.addAndGet(1_000_000_000L);
            if (t == 180) {
                wallStep.set(stepSeconds * 1_000_000_000L);
            }
            // The agent's own clock: the true time, whatever happened to the collector's wall clock.
            double agentNow = (START + mono.get()) / 1e9;
            List<GpuSample> gpus = new ArrayList<>();
            List<String> uuids = new ArrayList<>();
            for (int g = 0; g < 4; g++) {
                gpus.add(gpu(agentNow - 0.05, g, "GPU-" + g, 36 * GIB, 0.93));
                uuids.add("GPU-" + g);
            }
            fleet.ingestBatch(new AgentBatch("node1", "agent-1", ++seq, gpus,
                    List.of(attribution("healthy", uuids)), List.of(), new AgentHealth(0.002, 0L, 0L, 0L, 0L, 1.0),
                    null, agentNow, null));
            fleet.ingestSteps("healthy", List.of(StepEvent.of(seq, 1.0, agentNow)), "agent-1", null);
            fleet.tick();
        }
        exporter[0] = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, collectorClock, false);
        out[0] = fleet;
        return raised.raised;
    }

    private static double gauge(String scrape, String name) {
        return scrape.lines().filter(l -> l.startsWith(name + "{")).mapToDouble(
                l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElseThrow();
    }

    @Test
    void aWallClockSteppedAnHourForwardRaisesNothingAndExportsWallTimes() {
        MetricsExporter[] exporter = new MetricsExporter[1];
        Fleet[] fleet = new Fleet[1];
        List<String> raised = play(MonotonicClock.of(this::wallNanos, mono::get), 3600, exporter, fleet);
        assertThat(raised).as("a healthy run across a wall-clock step").isEmpty();
        String scrape = exporter[0].scrape();
        double wallNow = wallNanos() / 1e9;
        assertThat(gauge(scrape, "trainwatch_agent_last_seen_timestamp_seconds")).isCloseTo(wallNow, within(2.0));
        assertThat(gauge(scrape, "trainwatch_run_last_step_timestamp_seconds")).isCloseTo(wallNow, within(2.0));
        assertThat(fleet[0].run("healthy").orElseThrow().observed().stepSeconds()).isCloseTo(1.0, within(0.05));
    }

    @Test
    void aWallClockSteppedAnHourBackRaisesNothingAndExportsWallTimes() {
        MetricsExporter[] exporter = new MetricsExporter[1];
        Fleet[] fleet = new Fleet[1];
        List<String> raised = play(MonotonicClock.of(this::wallNanos, mono::get), -3600, exporter, fleet);
        assertThat(raised).as("a healthy run across a wall-clock step").isEmpty();
        String scrape = exporter[0].scrape();
        assertThat(gauge(scrape, "trainwatch_agent_last_seen_timestamp_seconds"))
                .isCloseTo(wallNanos() / 1e9, within(2.0));
    }

    @Test
    void onAPlainWallClockTheSameStepIsAFalseAlarm() {
        MetricsExporter[] exporter = new MetricsExporter[1];
        Fleet[] fleet = new Fleet[1];
        List<String> raised = play(new WallClock(), 3600, exporter, fleet);
        assertThat(raised).as("what the collector did before its clock was monotonic")
                .anySatisfy(r -> assertThat(r).matches("(agent_lost|stalled).*"));
    }
}
