package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Regression: after a restart, a restored {@code xid_error} was resolved on the first evaluation because the
 * XIDs behind it lived only in the lost GPU states. It must stay active for its usual 30 minutes after the
 * newest XID.
 */
class RestoredXidTest {

    @Test
    void aRestoredXidErrorStaysActiveUntilItsNewestXidIsOld() {
        double t0 = 1_800_000_000.0;
        SettableClock clock = new SettableClock(Instant.ofEpochSecond((long) t0 + 60));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        Anomaly xid = new Anomaly(AnomalyKind.XID_ERROR, Severity.CRITICAL, true, t0, null,
                "XID 79 (GPU has fallen off the bus) on GPU 0 on node1",
                Map.of("xids", List.of(79), "events", 1, "gpu_uuids", List.of("GPU-1"), "newest_ts", t0), "drain");
        fleet.restoreRun(new RunSummary("r1", null, t0 - 600, t0, false, null, null, null, null, null, null, null,
                null, null, List.of("node1"), List.of("GPU-1"), List.of(xid), null, null, null, null));

        for (int i = 0; i < 20; i++) {
            clock.advanceSeconds(60);
            fleet.tick();
        }
        assertThat(active(fleet)).as("21 minutes after the XID").contains(AnomalyKind.XID_ERROR);
        for (int i = 0; i < 15; i++) {
            clock.advanceSeconds(60);
            fleet.tick();
        }
        assertThat(active(fleet)).as("36 minutes after the XID").doesNotContain(AnomalyKind.XID_ERROR);
    }

    private static List<AnomalyKind> active(Fleet fleet) {
        return fleet.run("r1").orElseThrow().anomalies().stream().filter(Anomaly::active).map(Anomaly::kind)
                .toList();
    }
}
