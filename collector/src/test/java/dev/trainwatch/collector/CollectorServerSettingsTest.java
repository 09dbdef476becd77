package dev.trainwatch.collector;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.RunSummary;
import dev.trainwatch.collector.testing.MutableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A collector that builds its own fleet gives it the settings of its config. */
class CollectorServerSettingsTest {

    @Test
    void theFleetItBuildsSendsSummariesAtTheConfiguredInterval() {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        List<Long> changed = new ArrayList<>();
        FleetListener listener = new FleetListener() {
            @Override
            public void onRunChanged(RunSummary summary) {
                changed.add(summary.lastStep());
            }
        };
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withClock(clock)
                .withSummaryInterval(Duration.ZERO);
        try (CollectorServer server = CollectorServer.builder(config).listener(listener).start()) {
            server.fleet().ingestSteps("r", List.of(StepEvent.of(1, 1.0, clock.seconds())));
            clock.advance(Duration.ofMillis(500));
            // Within the default 2 s interval: only a zero interval sends this change at once.
            server.fleet().ingestSteps("r", List.of(StepEvent.of(2, 1.0, clock.seconds())));
        }
        assertThat(changed).containsExactly(1L, 2L);
    }
}
