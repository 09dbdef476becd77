package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A report's {@code interval_steps} (the steps its mean covers: the gap to the agent's previous line) counts each
 * step once, even when steps inside that gap were counted from another report. OperationsIT met it: node-b's log is
 * a symlink swapped from run-1.log to run-2.log and back; an agent killed after sending run-2.log's steps, before it
 * committed their log position, came back on run-1.log, read its last line again and then the next one, and that one
 * said it covered the eight steps logged into run-2.log meanwhile (140 steps counted for 127 lines).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class IntervalCountedOnceTest {

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    private static StepEvent report(long step, Integer interval, String source, double ts) {
        return new StepEvent(step, 0.5, null, null, null, null, interval, null, 0.3, null, null, null, null, null, ts,
                source);
    }

    /** Ingests reports of steps {@code from..to} (the agent's gaps: 1, the first one null unless given). */
    private List<StepEvent> send(String source, long from, long to, Integer firstInterval) {
        List<StepEvent> reports = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            clock.advanceSeconds(0.5);
            reports.add(report(s, s == from ? firstInterval : Integer.valueOf(1), source, clock.seconds()));
        }
        return fleet.ingestSteps("node-b", reports);
    }

    private static long steps(List<StepEvent> counted) {
        return counted.stream().mapToLong(e -> e.intervalSteps() == null ? 1 : e.intervalSteps()).sum();
    }

    @Test
    void aLineWhoseGapSpansStepsCountedFromAnotherFileCountsOnlyTheNewOnes() {
        long counted = steps(send("run1.0", 1, 8, null));
        counted += steps(send("run2.0", 9, 16, 1));
        // The restarted agent reads run-1.log's last lines again (dropped), then step 17: 9 steps since step 8.
        List<StepEvent> again = send("run1.0", 6, 8, null);
        assertThat(again).as("lines read again").isEmpty();
        clock.advanceSeconds(0.5);
        List<StepEvent> next = fleet.ingestSteps("node-b", List.of(report(17, 9, "run1.0", clock.seconds())));
        counted += steps(next);

        assertThat(next).singleElement().extracting(StepEvent::intervalSteps).isEqualTo(1);
        assertThat(counted).as("steps counted for 17 lines").isEqualTo(17);
    }

    @Test
    void aLogThatPrintsEveryHundredStepsStillCountsItsHundredsAndARestartCountsAgain() {
        List<StepEvent> counted = new ArrayList<>();
        for (long s = 100; s <= 1000; s += 100) {
            clock.advanceSeconds(50);
            counted.addAll(fleet.ingestSteps("node-b", List.of(report(s, s == 100 ? null : 100, "dit.0",
                    clock.seconds()))));
        }
        assertThat(steps(counted)).isEqualTo(1 + 9 * 100);
        // Resumed from the checkpoint of step 500 (a new stretch of the file), logging every 100 steps again.
        clock.advanceSeconds(120);
        counted.clear();
        for (long s = 600; s <= 1200; s += 100) {
            clock.advanceSeconds(50);
            counted.addAll(fleet.ingestSteps("node-b", List.of(report(s, 100, "dit.1", clock.seconds()))));
        }
        assertThat(counted).extracting(StepEvent::intervalSteps).containsOnly(100);
    }
}
