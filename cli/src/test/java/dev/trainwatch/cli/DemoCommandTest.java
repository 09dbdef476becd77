package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code trainwatch demo} end to end: a separate JVM, its printed page URL, its API and the anomalies it raises. */
class DemoCommandTest {

    @TempDir
    Path dir;

    @Test
    void servesFourSyntheticRunsWhoseAnomaliesTheDetectorsFind() throws Exception {
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "127.0.0.1:0",
                "--speed", "10")) {
            URI page = demo.pageUri();
            assertThat(demo.stdout()).contains("SYNTHETIC");
            JsonNode first = demo.runs(page);
            assertThat(first).hasSize(4);
            assertThat(first).allMatch(r -> r.path("synthetic").asBoolean() && r.path("run_id").asText().startsWith("demo-"));

            // At ten times the speed, a minute of sustained trouble takes a few seconds.
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                Map<String, List<String>> active = activeByRun(demo.runs(page));
                assertThat(active.get("demo-pixart-sigma-online-features")).contains("data_starvation");
                assertThat(active.get("demo-sana-1600m-memory-creep")).contains("oom_risk");
                assertThat(active.get("demo-pixart-alpha-8gpu-straggler")).contains("throttling");
            });
            Map<String, List<String>> active = activeByRun(demo.runs(page));
            assertThat(active.get("demo-dit-xl-2-healthy")).as("the healthy run stays healthy").isEmpty();

            JsonNode starved = demo.getJson(page.resolve("v1/runs/demo-pixart-sigma-online-features"));
            assertThat(starved.path("observed").path("data_wait_ratio").asDouble()).isGreaterThan(0.5);
            assertThat(starved.path("estimate").path("step_seconds").asDouble()).isPositive();
            for (JsonNode anomaly : starved.path("anomalies")) {
                assertThat(anomaly.path("suggestion").asText()).isNotBlank();
                assertThat(anomaly.path("evidence").size()).isPositive();
            }
            String html = demo.getJson(page.resolve("v1/runs")).toString();
            assertThat(html).isNotEmpty();
        }
    }

    @Test
    void refusesASpeedOutOfRangeInOneLine() throws Exception {
        try (TrainwatchProcess demo = TrainwatchProcess.start(dir, Map.of(), "demo", "--listen", "127.0.0.1:0",
                "--speed", "1000")) {
            assertThat(demo.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.USAGE);
            assertThat(demo.stderr().strip()).startsWith("trainwatch: --speed must be between").doesNotContain("\n");
        }
    }

    private static Map<String, List<String>> activeByRun(JsonNode runs) {
        Map<String, List<String>> active = new HashMap<>();
        for (JsonNode run : runs) {
            List<String> kinds = new java.util.ArrayList<>();
            run.path("anomalies").forEach(a -> {
                if (a.path("active").asBoolean()) {
                    kinds.add(a.path("kind").asText());
                }
            });
            active.put(run.path("run_id").asText(), kinds);
        }
        return active;
    }
}
