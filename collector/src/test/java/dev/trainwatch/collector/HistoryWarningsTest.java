package dev.trainwatch.collector;

import dev.trainwatch.collector.config.CollectorConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.io.TempDir;

/** A history write that fails is a WARNING of the history's logger (it was an INFO line of the alert log). */
@Isolated // watches process-wide log handlers
class HistoryWarningsTest {

    @TempDir
    Path dataDir;

    @Test
    void aFailedHistoryWriteIsAWarning() throws Exception {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Logger history = Logger.getLogger("dev.trainwatch.collector.history");
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        history.addHandler(capture);
        List<String> alertLog = new ArrayList<>();
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir);
        try (CollectorStack stack = CollectorStack.start(config, alertLog::add)) {
            stack.history().orElseThrow().close(); // the database goes away under the collector
            URI base = stack.server().uri();
            String spec = """
                    {"model":"dit-xl-2","gpu":"a100-80gb","gpus":1,"batch":32,"resolution":256,"precision":"bf16",
                     "optimizer":"adamw","features":"precomputed"}""";
            HttpResponse<String> put = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            base.resolve("/v1/runs/warn-run")).header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString(spec)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(put.statusCode()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(30)).until(() -> records.stream()
                    .anyMatch(r -> r.getMessage().startsWith("trainwatch: history: cannot")));
        } finally {
            history.removeHandler(capture);
        }
        assertThat(records.stream().filter(r -> r.getMessage().startsWith("trainwatch: history: cannot")))
                .allSatisfy(r -> assertThat(r.getLevel()).isEqualTo(Level.WARNING));
        assertThat(alertLog).noneMatch(line -> line.startsWith("trainwatch: history:"));
    }
}
