package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AnomalyTrackerTest {

    private final DetectorSettings settings = DetectorSettings.defaults();
    private final AnomalyTracker tracker = new AnomalyTracker(settings, 3);
    // step_time_above_estimate: sustain 120 s, clear after 180 s
    private static final AnomalyKind KIND = AnomalyKind.STEP_TIME_ABOVE_ESTIMATE;

    private static Optional<Finding> finding(Severity s) {
        return Optional.of(new Finding(s, "slow", Map.of("ratio", 2.0), "fix it"));
    }

    @Test
    void raisesOnlyAfterTheConditionHeldForItsSustain() {
        assertThat(tracker.update(0, KIND, finding(Severity.WARNING))).isEmpty();
        assertThat(tracker.update(60, KIND, finding(Severity.WARNING))).isEmpty();
        assertThat(tracker.update(90, KIND, Optional.empty())).isEmpty(); // a gap restarts the sustain
        assertThat(tracker.update(100, KIND, finding(Severity.WARNING))).isEmpty();
        assertThat(tracker.update(219, KIND, finding(Severity.WARNING))).isEmpty();
        var raised = tracker.update(220, KIND, finding(Severity.WARNING)).orElseThrow();
        assertThat(raised.raised()).isTrue();
        assertThat(raised.anomaly().since()).isEqualTo(220);
        assertThat(raised.anomaly().evidence()).containsEntry("ratio", 2.0);
        assertThat(tracker.isActive(KIND)).isTrue();
    }

    @Test
    void aFindingWhoseEvidenceSpansTimeCarriesItsOwnSustain() {
        // The kind's sustain is 120 s; a finding built on reports that already span their time asks for 10 s.
        Optional<Finding> quick = finding(Severity.WARNING).map(f -> f.withSustain(java.time.Duration.ofSeconds(10)));
        assertThat(tracker.update(0, KIND, finding(Severity.WARNING))).isEmpty();
        assertThat(tracker.update(5, KIND, quick)).isEmpty();
        assertThat(tracker.update(12, KIND, Optional.empty())).isEmpty(); // a gap restarts it
        assertThat(tracker.update(13, KIND, quick)).isEmpty();
        assertThat(tracker.update(22, KIND, quick)).isEmpty();
        var raised = tracker.update(23, KIND, quick).orElseThrow();
        assertThat(raised.anomaly().since()).isEqualTo(23);
        // Zero: raised at the first evaluation that holds.
        AnomalyTracker other = new AnomalyTracker(settings, 3);
        assertThat(other.update(0, KIND, finding(Severity.WARNING).map(f -> f.withSustain(java.time.Duration.ZERO))))
                .hasValueSatisfying(t -> assertThat(t.raised()).isTrue());
    }

    @Test
    void resolvesOnlyAfterTheConditionStayedAbsentForClearAfter() {
        tracker.update(0, KIND, finding(Severity.WARNING));
        tracker.update(120, KIND, finding(Severity.WARNING));
        assertThat(tracker.update(130, KIND, Optional.empty())).isEmpty();
        assertThat(tracker.update(200, KIND, finding(Severity.WARNING))).isEmpty(); // back: stays active
        assertThat(tracker.update(379, KIND, Optional.empty())).isEmpty();
        var resolved = tracker.update(380, KIND, Optional.empty()).orElseThrow();
        assertThat(resolved.raised()).isFalse();
        assertThat(resolved.anomaly().active()).isFalse();
        assertThat(resolved.anomaly().resolvedAt()).isEqualTo(380.0);
        assertThat(tracker.snapshot()).singleElement().satisfies(a -> assertThat(a.active()).isFalse());
    }

    @Test
    void escalatesAtOnceAndFallsBackOnlyAfterClearAfter() {
        tracker.update(0, KIND, finding(Severity.WARNING));
        tracker.update(120, KIND, finding(Severity.WARNING));
        var up = tracker.update(130, KIND, finding(Severity.CRITICAL)).orElseThrow();
        assertThat(up.anomaly().severity()).isEqualTo(Severity.CRITICAL);
        assertThat(tracker.update(140, KIND, finding(Severity.WARNING))).isEmpty();
        assertThat(tracker.snapshot().get(0).severity()).isEqualTo(Severity.CRITICAL);
        var down = tracker.update(310, KIND, finding(Severity.WARNING)).orElseThrow();
        assertThat(down.anomaly().severity()).isEqualTo(Severity.WARNING);
        assertThat(down.raised()).isTrue();
    }

    @Test
    void historyIsBoundedAndActiveComesFirst() {
        AnomalyKind xid = AnomalyKind.XID_ERROR; // no sustain, no clear delay
        for (int i = 0; i < 5; i++) {
            tracker.update(i * 10, xid, finding(Severity.CRITICAL));
            tracker.update(i * 10 + 1, xid, Optional.empty());
        }
        tracker.update(100, xid, finding(Severity.WARNING));
        assertThat(tracker.snapshot()).hasSize(4);
        assertThat(tracker.snapshot().get(0).active()).isTrue();
        assertThat(tracker.endAllExcept(200, null)).hasSize(1);
        assertThat(tracker.isActive(xid)).isFalse();
    }

    @Test
    void anomaliesActiveWhenTheRunEndsEndWithItUnresolvedButRunFailedStays() {
        tracker.update(10, AnomalyKind.XID_ERROR, finding(Severity.CRITICAL));
        tracker.update(10, AnomalyKind.RUN_FAILED, finding(Severity.CRITICAL));
        tracker.update(20, AnomalyKind.LOSS_NONFINITE, finding(Severity.CRITICAL));
        tracker.update(21, AnomalyKind.LOSS_NONFINITE, Optional.empty()); // cleared: resolved, not ended with the run

        List<AnomalyTracker.Transition> ended = tracker.endAllExcept(30, AnomalyKind.RUN_FAILED);

        assertThat(ended).singleElement().satisfies(t -> {
            assertThat(t.raised()).isFalse();
            assertThat(t.anomaly().kind()).isEqualTo(AnomalyKind.XID_ERROR);
            assertThat(t.anomaly().endedWithRun()).isTrue();
            assertThat(t.anomaly().active()).isFalse();
            assertThat(t.anomaly().resolvedAt()).isEqualTo(30.0);
        });
        assertThat(tracker.isActive(AnomalyKind.RUN_FAILED)).isTrue();
        assertThat(tracker.snapshot()).filteredOn(a -> a.kind() == AnomalyKind.LOSS_NONFINITE)
                .singleElement().satisfies(a -> assertThat(a.endedWithRun()).isFalse());
    }
}
