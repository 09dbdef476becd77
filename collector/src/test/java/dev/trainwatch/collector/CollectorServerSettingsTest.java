package dev.trainwatch.collector;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;

/** A collector that builds its own fleet gives it the settings of its config; one that builds its Vert.x its transport. */
class CollectorServerSettingsTest {

    /**
     * On Linux x86-64 (where the collector's jar carries Netty's epoll library) the collector's event loops use
     * epoll through JNI rather than Java's NIO selector: fewer objects and system calls per request
     * (docs/PERFORMANCE.md, "The shipped JVM settings"). Elsewhere Vert.x falls back to NIO without a word.
     */
    @Test
    void onLinuxX8664ItsEventLoopsUseEpoll() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("os.name").equals("Linux")
                && System.getProperty("os.arch").equals("amd64"), "epoll's library is bundled for Linux x86-64 only");
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        try (CollectorServer server = CollectorServer.builder(config).start()) {
            assertThat(server.vertx().isNativeTransportEnabled())
                    .as("native transport (unavailable because: %s)", server.vertx().unavailableNativeTransportCause())
                    .isTrue();
            java.net.http.HttpResponse<String> health = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                            "http://127.0.0.1:" + server.port() + "/healthz")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void theFleetItBuildsSendsSummariesAtTheConfiguredInterval() {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
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
