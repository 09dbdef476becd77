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
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/** A detector that throws is counted and logged at most once a minute; ingest and the other detectors go on. */
@Isolated
class DetectorFailureTest {

    @Test
    void aThrowingDetectorIsCountedNotLoggedEverySecond() {
        SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
        Detector broken = new Detector() {
            @Override
            public AnomalyKind kind() {
                return AnomalyKind.STALLED;
            }

            @Override
            public Optional<Finding> evaluate(RunContext run, boolean active) {
                throw new IllegalStateException("bug");
            }
        };
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults(),
                List.of(broken));
        List<LogRecord> errors = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
                    errors.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger log = Logger.getLogger(Fleet.class.getName());
        log.addHandler(capture);
        try {
            for (int step = 1; step <= 120; step++) {
                List<StepEvent> counted = fleet.ingestSteps("r1", List.of(StepEvent.of(step, 1.0,
                        clock.millis() / 1000.0)));
                assertThat(counted).as("ingest goes on").hasSize(1);
                fleet.tick();
                clock.advanceSeconds(1);
            }
        } finally {
            log.removeHandler(capture);
        }
        // Evaluated about once a second for two minutes: every failure counted, two log lines (one a minute).
        assertThat(fleet.detectorErrors()).containsOnlyKeys("stalled");
        assertThat(fleet.detectorErrors().get("stalled")).isGreaterThanOrEqualTo(100);
        assertThat(errors).hasSize(2);
        assertThat(errors.get(0).getThrown()).isInstanceOf(IllegalStateException.class);
        assertThat(fleet.run("r1").orElseThrow().observed().lastStep()).isEqualTo(120);
    }
}
