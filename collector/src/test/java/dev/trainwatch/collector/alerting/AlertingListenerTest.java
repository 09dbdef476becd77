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
    void aSeverityChangeResolvesTheOldAlertBeforeFiringTheNewOne() {
        AlertDispatcherTest.RecordingSink sink = new AlertDispatcherTest.RecordingSink(0, true, false);
        try (AlertDispatcher dispatcher = new AlertDispatcher(List.of(sink), AlertDispatcher.Settings.defaults(),
                Clock.systemUTC(), line -> { })) {
            AlertingListener listener = new AlertingListener(dispatcher);
            Anomaly warning = new Anomaly(AnomalyKind.STEP_TIME_ABOVE_ESTIMATE, Severity.WARNING, true, 1000.0, null,
                    "step 1.8x the estimate", Map.of("step_time_ratio", 1.8), "precompute features");
            Anomaly critical = new Anomaly(AnomalyKind.STEP_TIME_ABOVE_ESTIMATE, Severity.CRITICAL, true, 1060.0,
                    null, "step 3.4x the estimate", Map.of("step_time_ratio", 3.4), "precompute features");
            listener.onAnomalyRaised("r1", warning);
            listener.onAnomalyRaised("r1", critical);
            listener.onAnomalyResolved("r1", critical.resolved(1200.0));
            await().atMost(Duration.ofSeconds(5)).until(() -> sink.delivered.size() == 4);
            assertThat(sink.delivered).extracting(n -> n.severity() + (n.firing() ? " firing" : " resolved"))
                    .containsExactly("warning firing", "warning resolved", "critical firing", "critical resolved");
            assertThat(sink.delivered.get(0).startsAt()).isEqualTo(Instant.ofEpochSecond(1000));
            assertThat(sink.delivered.get(3).endsAt()).isEqualTo(Instant.ofEpochSecond(1200));
            assertThat(sink.delivered.get(2).suggestion()).isEqualTo("precompute features");
        }
    }
}
