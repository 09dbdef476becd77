package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.testing.MutableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A run that pushes PixArt-style steps with no spec registered: the data time cannot be split. */
class DataStarvationDetectorTest {

    @Test
    void withoutASpecTheMessageSaysWhatTheDataTimeMayHold() {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        for (int i = 1; i <= 20; i++) {
            clock.advance(Duration.ofSeconds(20));
            fleet.ingestSteps("no-spec", List.of(new StepEvent((long) i * 2, 10.0, 4.0, null, null, null, 2, null,
                    null, null, null, null, null, null, clock.seconds())));
            fleet.tick();
        }
        Anomaly a = fleet.run("no-spec").orElseThrow().anomalies().get(0);
        assertThat(a.kind()).isEqualTo(AnomalyKind.DATA_STARVATION);
        assertThat(a.severity()).isEqualTo(Severity.WARNING);
        assertThat(a.message()).contains("40% of each 10 s step is data time")
                .contains("register the run's spec");
        assertThat(a.suggestion()).contains("precompute").contains("DataLoader workers");
    }
}
