package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Finding;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.testing.MutableClock;
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

    final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T00:00:00Z"));
    final List<Double> judged = new ArrayList<>();
    final double t0 = clock.millis() / 1000.0;

    final Detector counting = new Detector() {
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
}
