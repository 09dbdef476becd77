package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's flood, against {@code trainwatch collector} as a separate process: thousands of new run ids and
 * agents arrive while ten runs are training. The log stays a handful of one-line records, and no live run is lost.
 */
class CollectorFloodIT {
    private static final Pattern LISTENING = Pattern.compile("listening on (http://127\\.0\\.0\\.1:\\d+)");
    private static final Pattern ONE_LINE_RECORD = Pattern.compile(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z (ERROR|WARN |INFO |DEBUG) [\\w.$-]+: \\S.*");

    private final HttpClient http = HttpClient.newHttpClient();

    private int post(URI base, String path, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void aFloodWritesABoundedNumberOfOneLineRecordsAndEvictsNoLiveRun(@TempDir Path dir) throws Exception {
        try (TrainwatchProcess collector = TrainwatchProcess.start(dir, Map.of(), "collector", "--listen",
                "127.0.0.1:0")) {
            URI base = await().atMost(Duration.ofSeconds(60)).until(() -> {
                Matcher m = LISTENING.matcher(collector.stdout());
                return m.find() ? URI.create(m.group(1) + "/") : null;
            }, uri -> uri != null);
            int[] statuses = new int[600];
            for (int i = 0; i < 1_500; i++) {
                if (i % 100 == 0) {
                    for (int live = 0; live < 10; live++) {
                        assertThat(post(base, "v1/runs/live-" + live + "/steps",
                                "{\"step\":" + (i + 1) + ",\"time_s\":1.0}")).isEqualTo(200);
                    }
                }
                statuses[post(base, "v1/runs/flood-" + i + "/steps", "{\"step\":1,\"time_s\":1.0}")]++;
                String host = "flood-host-" + i;
                String gpu = "{\"ts\":" + (System.currentTimeMillis() / 1000.0) + ",\"index\":0,\"uuid\":\"GPU-"
                        + host + "\",\"memory_used_bytes\":1000}";
                statuses[post(base, "v1/samples", "{\"host\":\"" + host + "\",\"agent_id\":\"" + host
                        + "\",\"seq\":1,\"gpus\":[" + gpu + "]}")]++;
            }
            // 1,024 run slots: 10 live runs and 1,014 of the flood; 1,024 agent slots.
            assertThat(statuses[200]).isEqualTo(1_014 + 1_024);
            assertThat(statuses[429]).isEqualTo(3_000 - 1_014 - 1_024);
            for (int live = 0; live < 10; live++) {
                HttpResponse<String> run = http.send(HttpRequest.newBuilder(base.resolve("v1/runs/live-" + live))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertThat(run.statusCode()).as("live-" + live + " kept").isEqualTo(200);
                assertThat(run.body()).contains("\"last_step\":1401");
            }
            collector.terminate();
            collector.waitFor(Duration.ofSeconds(30));
            List<String> lines = collector.stderr().lines().toList();
            assertThat(lines).as("stderr:\n" + collector.stderr()).hasSizeLessThanOrEqualTo(6)
                    .allSatisfy(line -> assertThat(line).matches(ONE_LINE_RECORD));
            assertThat(String.join("\n", lines)).contains("run limit 1,024 reached and every run is live")
                    .contains("agent limit 1,024 reached and every agent is live");
            // The fleet says each limit once a minute itself (the refusals are counted in the metrics), so no
            // repeat of it even reaches the log's own de-duplication.
            assertThat(lines.stream().filter(l -> l.contains("run limit 1,024 reached"))).hasSize(1);
        }
    }
}
