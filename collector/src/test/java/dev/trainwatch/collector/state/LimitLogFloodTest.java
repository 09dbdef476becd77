package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.RunAttribution;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/** A flood of new run ids past the run limit is counted, and logged once a minute, not once per run. */
@Isolated
class LimitLogFloodTest {

    @Test
    void threeThousandJunkRunsWriteAFewLinesNotThreeThousand() {
        SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
        FleetSettings d = FleetSettings.defaults();
        FleetSettings small = new FleetSettings(100, d.maxGpus(), d.maxAgents(), d.window(), d.gpuWindowEntries(),
                d.stepWindowEntries(), d.evaluateEvery(), d.anomalyHistory(), d.endedRunRetention())
                .withSummaryInterval(d.summaryInterval());
        Fleet fleet = new Fleet(new FakePredictor(), clock, small, DetectorSettings.defaults());
        List<LogRecord> warnings = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger log = Logger.getLogger(FleetLog.NAME);
        log.addHandler(capture);
        try {
            long seq = 0;
            for (int first = 0; first < 3_000; first += 50) {
                List<RunAttribution> runs = new ArrayList<>();
                for (int i = first; i < first + 50; i++) {
                    runs.add(Samples.attribution("junk-" + i, List.of()));
                }
                try {
                    fleet.ingestBatch(Samples.batch("flood", "flood-agent", ++seq, List.of(), runs, List.of()));
                } catch (LimitReachedException refusedWhole) {
                    // Past the first 100 runs each batch is refused whole (429: its agent would spool it).
                }
                clock.advanceSeconds(1); // 60 batches: a minute of flood
            }
        } finally {
            log.removeHandler(capture);
        }
        long refused = fleet.limits().stream().filter(u -> u.kind() == Slots.Kind.RUNS)
                .mapToLong(Slots.Usage::refused).sum();
        long forgotten = fleet.limits().stream().filter(u -> u.kind() == Slots.Kind.RUNS)
                .mapToLong(Slots.Usage::forgotten).sum();
        assertThat(forgotten).as("live runs forgotten").isZero();
        assertThat(refused).as("batches refused").isEqualTo(58);
        assertThat(warnings).as("warning lines for a minute of flood").hasSizeLessThanOrEqualTo(2);
    }
}
