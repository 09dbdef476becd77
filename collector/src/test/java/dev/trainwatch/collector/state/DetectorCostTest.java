package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Finding;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.metrics.DetectorMetrics;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Each detector's evaluations are counted and timed, the failing ones too, and exported per kind. */
class DetectorCostTest {

    @Test
    void everyEvaluationOfEveryDetectorIsCountedAndTimed() {
        SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
        Detector slow = detector(AnomalyKind.STRAGGLER, false);
        Detector broken = detector(AnomalyKind.STALLED, true);
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults(),
                List.of(slow, broken));
        assertThat(fleet.detectorCosts()).as("before any run").containsOnlyKeys("straggler", "stalled")
                .allSatisfy((kind, total) -> assertThat(total.evaluations()).isZero());
        for (int step = 1; step <= 30; step++) {
            fleet.ingestSteps("r1", List.of(StepEvent.of(step, 1.0, clock.millis() / 1000.0)));
            fleet.tick();
            clock.advanceSeconds(1);
        }
        DetectorCost.Total straggler = fleet.detectorCosts().get("straggler");
        DetectorCost.Total stalled = fleet.detectorCosts().get("stalled");
        assertThat(straggler.evaluations()).isGreaterThanOrEqualTo(25);
        // the detector busy-waits 200 µs an evaluation: the time is counted on the monotonic clock
        assertThat(straggler.seconds()).isGreaterThanOrEqualTo(straggler.evaluations() * 200e-6);
        assertThat(stalled.evaluations()).as("a throwing detector's evaluations count too")
                .isEqualTo(fleet.detectorErrors().get("stalled"));

        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new DetectorMetrics(fleet::detectorErrors, fleet::detectorCosts).bindTo(registry);
        String scrape = registry.scrape();
        assertThat(scrape).contains("# TYPE trainwatch_detector_evaluation_seconds summary")
                .contains("trainwatch_detector_evaluation_seconds_count{kind=\"straggler\"} "
                        + fleet.detectorCosts().get("straggler").evaluations())
                .contains("trainwatch_detector_evaluation_seconds_sum{kind=\"stalled\"}")
                .contains("trainwatch_detector_errors_total{kind=\"stalled\"}");
    }

    private static Detector detector(AnomalyKind kind, boolean throwing) {
        return new Detector() {
            @Override
            public AnomalyKind kind() {
                return kind;
            }

            @Override
            public Optional<Finding> evaluate(RunContext run, boolean active) {
                if (throwing) {
                    throw new IllegalStateException("bug");
                }
                long until = System.nanoTime() + 200_000;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                return Optional.empty();
            }
        };
    }
}
