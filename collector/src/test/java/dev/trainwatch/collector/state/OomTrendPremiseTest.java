package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static dev.trainwatch.protocol.testing.Samples.gpu;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The OOM trend must re-check its premise every evaluation: memory that ramped once and stays flat is not growing
 * (issue: "grows 22.5 GiB/min and reaches its 80.0 GiB in about 0.00 s", critical for five minutes of flat memory).
 */
class OomTrendPremiseTest {
    private static final double GIB = 1L << 30;

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
    private long seq;

    /** Plays {@code seconds} of one GPU whose memory follows {@code memoryAt(t)}; returns oom_risk each second. */
    private List<Anomaly> play(double seconds, DoubleUnaryOperator memoryAt, List<String> messages) {
        Random noise = new Random(7);
        double start = clock.seconds();
        for (int t = 0; t < seconds; t++) {
            clock.advance(Duration.ofSeconds(1));
            double now = clock.seconds();
            long used = (long) (memoryAt.applyAsDouble(now - start) + noise.nextGaussian() * 20e6);
            fleet.ingestBatch(batch("node1", "agent-1", ++seq, List.of(gpu(now, 0, "GPU-0", used, 0.95)),
                    List.of(attribution("ramp-run", List.of("GPU-0"))), List.of()));
            fleet.tick();
            fleet.run("ramp-run").orElseThrow().anomalies().stream()
                    .filter(a -> a.kind() == AnomalyKind.OOM_RISK && a.active())
                    .forEach(a -> messages.add((int) (now - start) + "s " + a.severity() + " " + a.message()));
        }
        return fleet.run("ramp-run").orElseThrow().anomalies();
    }

    @Test
    void aRampToAPlateauWithRoomLeftRaisesNothing() {
        List<String> raised = new java.util.ArrayList<>();
        // 28 GiB -> 70 GiB at 22.5 GiB/min, then flat for seven minutes on an 80 GiB card.
        play(540, t -> Math.min(28 * GIB + 22.5 * GIB / 60 * t, 70 * GIB), raised);
        assertThat(raised).as("oom_risk raised on a ramp that plateaued at 70 of 80 GiB").isEmpty();
    }

    @Test
    void flatMemoryAfterARampCloseToCapacityNeverShowsATimeToFullOfZeroAndClearsOnceFlat() {
        List<String> raised = new java.util.ArrayList<>();
        // The run: 28 -> 78.7 GiB, then flat. While it climbs, a trend towards 80 GiB may be raised; once flat
        // it must not be called a trend, and no message may claim it is full "in about 0.00 s".
        play(135, t -> Math.min(28 * GIB + 22.5 * GIB / 60 * t, 78.7 * GIB), raised);
        List<String> duringFlat = new java.util.ArrayList<>();
        play(300, t -> 78.7 * GIB, duringFlat);
        assertThat(raised).noneMatch(m -> m.contains("in about 0"));
        // Within seconds of levelling off the text says what is true now (1.3 GiB free), not the old growth.
        assertThat(duringFlat.subList(20, duringFlat.size())).noneMatch(m -> m.contains("grows"))
                .allMatch(m -> m.contains("GiB free of 80.0 GiB"));
        // Critical is held for the hysteresis (2 min) after the last critical reading, then it is a warning: 1.3 GiB
        // free of 80 is close to full, but nothing is growing.
        assertThat(duringFlat.get(duringFlat.size() - 1)).contains("WARNING");
        assertThat(duringFlat.subList(140, duringFlat.size())).noneMatch(m -> m.contains("CRITICAL"));
    }

    @Test
    void aSteadyLeakTowardsCapacityIsStillRaisedWithItsTimeToFullFromTheObservedMemory() {
        List<String> raised = new java.util.ArrayList<>();
        // 50 GiB growing 40 MB/s: full in about 13 minutes.
        play(400, t -> 50 * GIB + 40e6 * t, raised);
        assertThat(raised).anySatisfy(m -> assertThat(m).contains("grows").contains("/min"));
        Anomaly oom = fleet.run("ramp-run").orElseThrow().anomalies().stream()
                .filter(a -> a.kind() == AnomalyKind.OOM_RISK && a.active()).findFirst().orElseThrow();
        long seconds = ((Number) oom.evidence().get("seconds_to_full")).longValue();
        double usedNow = ((Number) oom.evidence().get("memory_used_bytes")).doubleValue();
        assertThat(seconds).isCloseTo(Math.round((80 * GIB - usedNow) / 40e6), org.assertj.core.data.Offset.offset(60L));
    }
}
