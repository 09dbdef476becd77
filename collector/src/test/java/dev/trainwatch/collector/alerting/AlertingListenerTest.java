package dev.trainwatch.collector.alerting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Severity;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AlertingListenerTest {

    @Test
    void aSeverityChangeIsOneNoticeThatNamesTheSeverityItReplaces() {
        AlertDispatcherTest.RecordingSink sink = new AlertDispatcherTest.RecordingSink(0, true, false);
        try (AlertDispatcher dispatcher = new AlertDispatcher(List.of(sink), AlertDispatcher.Settings.defaults(),
                Clock.systemUTC(), line -> { })) {
            AlertingListener listener = new AlertingListener(dispatcher, () -> 0);
            Anomaly warning = new Anomaly(AnomalyKind.STEP_TIME_ABOVE_ESTIMATE, Severity.WARNING, true, 1000.0, null,
                    "step 1.8x the estimate", Map.of("step_time_ratio", 1.8), "precompute features");
            Anomaly critical = new Anomaly(AnomalyKind.STEP_TIME_ABOVE_ESTIMATE, Severity.CRITICAL, true, 1060.0,
                    null, "step 3.4x the estimate", Map.of("step_time_ratio", 3.4), "precompute features");
            listener.onAnomalyRaised("r1", warning);
            listener.onAnomalyRaised("r1", critical);
            listener.onAnomalyResolved("r1", critical.resolved(1200.0));
            await().atMost(Duration.ofSeconds(5)).until(() -> sink.delivered.size() == 3);
            // Not "warning resolved" then "critical firing" a millisecond later: one change.
            assertThat(sink.delivered).extracting(n -> n.severity() + (n.severityChanged()
                            ? " changed from " + n.previousSeverity() : n.firing() ? " firing" : " resolved"))
                    .containsExactly("warning firing", "critical changed from warning", "critical resolved");
            assertThat(sink.delivered.get(0).startsAt()).isEqualTo(Instant.ofEpochSecond(1000));
            assertThat(sink.delivered.get(2).endsAt()).isEqualTo(Instant.ofEpochSecond(1200));
            assertThat(sink.delivered.get(1).suggestion()).isEqualTo("precompute features");
            assertThat(LogSink.line(sink.delivered.get(1))).startsWith("trainwatch alert CHANGED warning->critical "
                    + "step_time_above_estimate run=r1");
        }
    }

    @Test
    void alertmanagerStillEndsTheOldSeveritysAlertInTheSameRequest() {
        AlertNotice change = new AlertNotice("r1", "oom_risk", "critical", Instant.ofEpochSecond(1060), null,
                "GPU 0 has 0.5 GiB free", "lower the batch", Map.of(), "warning", false);
        var body = new AlertmanagerSink(java.net.URI.create("http://127.0.0.1:1"), null).body(List.of(change));
        assertThat(body).hasSize(2);
        assertThat(((Map<?, ?>) body.get(0).get("labels")).get("severity")).isEqualTo("warning");
        assertThat(body.get(0).get("endsAt")).isEqualTo("1970-01-01T00:17:40Z");
        assertThat(((Map<?, ?>) body.get(1).get("labels")).get("severity")).isEqualTo("critical");
        assertThat(body.get(1)).doesNotContainKey("endsAt");
    }

    @Test
    void anAnomalyThatEndedWithItsRunLeavesAsEndedWithTheRunNotResolved() {
        AlertDispatcherTest.RecordingSink sink = new AlertDispatcherTest.RecordingSink(0, true, false);
        try (AlertDispatcher dispatcher = new AlertDispatcher(List.of(sink), AlertDispatcher.Settings.defaults(),
                Clock.systemUTC(), line -> { })) {
            AlertingListener listener = new AlertingListener(dispatcher, () -> 0);
            Anomaly nan = new Anomaly(AnomalyKind.LOSS_NONFINITE, Severity.CRITICAL, true, 1000.0, null,
                    "loss is NaN since step 35", Map.of(), "lower the learning rate");
            listener.onAnomalyRaised("r1", nan);
            listener.onAnomalyResolved("r1", nan.endedWithRun(1300.0));
            await().atMost(Duration.ofSeconds(5)).until(() -> sink.delivered.size() == 2);
            AlertNotice last = sink.delivered.get(1);
            assertThat(last.firing()).isFalse();
            assertThat(last.endedWithRun()).isTrue();
            assertThat(last.endsAt()).isEqualTo(Instant.ofEpochSecond(1300));
            assertThat(LogSink.line(last)).startsWith("trainwatch alert UNRESOLVED critical loss_nonfinite run=r1");
        }
    }
}
