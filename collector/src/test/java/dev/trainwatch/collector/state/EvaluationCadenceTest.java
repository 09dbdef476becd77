package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Finding;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * When a run is judged: as its input arrives (at most once a second), and by the fleet's tick only when input arrived
 * since it was last judged or every {@value EvaluationSchedule#IDLE_EVALUATE_SECONDS} s without input — not every
 * second for every run whatever arrived.
 */
class EvaluationCadenceTest {

    final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
    final List<Double> judged = new ArrayList<>();
    final double t0 = clock.millis() / 1000.0;

    final Detector counting = counting(judged, t0);

    /** A detector that finds nothing and notes when it was asked, in seconds since {@code t0}. */
    static Detector counting(List<Double> judged, double t0) {
        return new Detector() {
            @Override
            public AnomalyKind kind() {
                return AnomalyKind.STALLED;
            }

            @Override
            public Optional<Finding> evaluate(RunContext run, boolean active) {
                judged.add(run.now() - t0);
                return Optional.empty();
            }
        };
    }

    final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults(),
            List.of(counting));

    long step;

    void report() {
        step++;
        fleet.ingestSteps("r1", List.of(StepEvent.of(step, 1.0, clock.millis() / 1000.0)));
    }

    /** Seconds [from, to) of the judgements. */
    List<Double> judgedBetween(double from, double to) {
        return judged.stream().filter(t -> t >= from && t < to).toList();
    }

    @Test
    void everySecondWhileReportsArriveEveryFiveSecondsWithout() {
        // 0-19 s: a report and a tick every second.
        for (int s = 0; s < 20; s++) {
            report();
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(judgedBetween(0, 20)).hasSize(20);

        // 20-59 s: silence, the tick every second: judged every 5 s (a growing silence is still seen).
        for (int s = 20; s < 60; s++) {
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(judgedBetween(20, 60)).containsExactly(24.0, 29.0, 34.0, 39.0, 44.0, 49.0, 54.0, 59.0);

        // 60-99 s: a batch every 5 s (an agent with --ship-every 5s): judged as each arrives, not in between.
        for (int s = 60; s < 100; s++) {
            if (s % 5 == 2) {
                report();
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(judgedBetween(60, 100)).containsExactly(62.0, 67.0, 72.0, 77.0, 82.0, 87.0, 92.0, 97.0);
    }

    /**
     * A run whose input comes in bursts every 10 s (an agent with --ship-every 10s) is judged as each arrives, not
     * also halfway in between; once its next batch is overdue by half its gap it is judged without one, then every
     * 15 s of silence — and a run back to input every second is judged after 5 s of silence again.
     */
    @Test
    void aRunThatSendsEveryTenSecondsIsJudgedWithoutInputOnlyOnceItsNextBatchIsOverdue() {
        for (int s = 0; s < 100; s++) {
            if (s % 10 == 0 && s < 50) {
                report();                          // the batch
                clock.advanceSeconds(0.05);
                report();                          // its steps request, the same burst
                clock.advanceSeconds(-0.05);
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        // 0: arrival; 1: the tick, for the steps request; 6: 5 s idle (the run's gap is not known yet); from the
        // second batch on, arrivals and their steps only; silence after the batch at 40: 15 s after its last judgement.
        assertThat(judged).containsExactly(0.0, 1.0, 6.0, 10.0, 11.0, 20.0, 21.0, 30.0, 31.0, 40.0, 41.0, 56.0, 71.0,
                86.0);

        judged.clear();
        for (int s = 100; s < 120; s++) {
            if (s < 105) {
                report();
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(judgedBetween(100, 120)).containsExactly(100.0, 101.0, 102.0, 103.0, 104.0, 109.0, 114.0, 119.0);
    }

    @Test
    void inputThatCameBetweenTwoTicksIsJudgedByTheNextTickWhenIngestHadJustJudged() {
        report();                      // judged at 0 on arrival
        clock.advanceSeconds(0.4);
        report();                      // 0.4 s: too soon after the last judgement, not judged on arrival
        assertThat(judged).containsExactly(0.0);
        clock.advanceSeconds(0.6);
        fleet.tick();                  // 1 s: input arrived since the last judgement, so judged now, not at 5 s
        assertThat(judged).containsExactly(0.0, 1.0);
        clock.advanceSeconds(1);
        fleet.tick();                  // 2 s: nothing new
        assertThat(judged).containsExactly(0.0, 1.0);
    }

    @Test
    void aSlowDetectorIsAskedEveryTenSecondsAndAtOnceWhenAnotherAnomalyMoves() {
        List<Double> asked = new ArrayList<>();
        Detector slow = new Detector() {
            @Override
            public AnomalyKind kind() {
                return AnomalyKind.GPU_UNDERUTILIZED;
            }

            @Override
            public Optional<Finding> evaluate(RunContext run, boolean active) {
                asked.add(run.now() - t0);
                return Optional.empty();
            }

            @Override
            public double everySeconds() {
                return 10;
            }
        };
        // Asked before the slow one, as gpu_idle and data_starvation are before gpu_underutilized: raised at 23 s.
        Detector other = new Detector() {
            @Override
            public AnomalyKind kind() {
                return AnomalyKind.STALLED;
            }

            @Override
            public Optional<Finding> evaluate(RunContext run, boolean active) {
                return run.now() - t0 >= 23 ? Optional.of(new Finding(dev.trainwatch.collector.detect.Severity.WARNING,
                        "stopped", java.util.Map.of(), null)) : Optional.empty();
            }
        };
        Fleet twoDetectors = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
                DetectorSettings.defaults(), List.of(other, slow));
        for (int s = 0; s < 45; s++) {
            twoDetectors.ingestSteps("r1", List.of(StepEvent.of(s + 1, 1.0, clock.millis() / 1000.0)));
            twoDetectors.tick();
            clock.advanceSeconds(1);
        }
        assertThat(twoDetectors.run("r1").orElseThrow().anomalies())
                .anySatisfy(a -> assertThat(a.kind()).isEqualTo(AnomalyKind.STALLED));
        assertThat(asked).containsExactly(0.0, 10.0, 20.0, 23.0, 33.0, 43.0);
    }

    @Test
    void anAgentThatFallsSilentIsNamedAtOnceNotAtTheNextIdleJudgement() {
        Fleet real = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        List<String> uuids = java.util.stream.IntStream.range(0, EvaluationCost.GPUS)
                .mapToObj(g -> "GPU-0000000a-0000-4000-8000-00000000000" + g).toList();
        double lastBatch = 0;
        for (int s = 0; s < 80; s++) {
            double now = clock.millis() / 1000.0;
            if (s < 20) {
                real.ingestBatch(EvaluationCost.batch(0, uuids, s + 1, now, s));
                lastBatch = now;
            }
            real.tick();
            clock.advanceSeconds(1);
        }
        dev.trainwatch.collector.detect.Anomaly lost = real.run("run-0").orElseThrow().anomalies().stream()
                .filter(a -> a.kind() == AnomalyKind.AGENT_LOST).findFirst().orElseThrow();
        // 30 s of silence is the limit; the tick after it names the agent (not up to 5 s later).
        assertThat(lost.since() - lastBatch).isEqualTo(31.0);
    }
}
