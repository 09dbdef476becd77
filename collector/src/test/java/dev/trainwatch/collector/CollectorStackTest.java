package dev.trainwatch.collector;

import dev.trainwatch.collector.config.CollectorConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.protocol.Json;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The assembled collector keeps what it acknowledged across a restart on the same data directory. */
class CollectorStackTest {
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<String> log = java.util.Collections.synchronizedList(new ArrayList<>());

    @TempDir
    Path dataDir;

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRegisteredRunSurvivesARestartAndShowsInTheHistory() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir);
        String spec = """
                {"model":"pixart-sigma-xl-2","gpu":"a800-80gb","batch":20,"resolution":1024,"precision":"fp16",
                 "optimizer":"came","grad_checkpointing":true,"features":"online","total_steps":10000}""";
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            HttpResponse<String> put = send(HttpRequest.newBuilder(base.resolve("/v1/runs/pixart-1"))
                    .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(spec)));
            assertThat(put.statusCode()).isEqualTo(200);
            assertThat(stack.restoredRuns()).isZero();
        }
        try (CollectorStack restarted = CollectorStack.start(config, log::add)) {
            assertThat(restarted.restoredRuns()).isEqualTo(1);
            URI base = restarted.server().uri();
            HttpResponse<String> run = send(HttpRequest.newBuilder(base.resolve("/v1/runs/pixart-1")));
            assertThat(run.statusCode()).isEqualTo(200);
            JsonNode body = Json.MAPPER.readTree(run.body());
            assertThat(body.at("/spec/batch").asInt()).isEqualTo(20);
            assertThat(body.at("/estimate/peak_memory_bytes").asLong()).isPositive();

            JsonNode history = Json.MAPPER.readTree(send(HttpRequest.newBuilder(base.resolve("/v1/history"))).body());
            assertThat(history.get("persistent").asBoolean()).isTrue();
            assertThat(history.at("/runs/0/run_id").asText()).isEqualTo("pixart-1");
            assertThat(send(HttpRequest.newBuilder(base.resolve("/v1/history?limit=0"))).statusCode()).isEqualTo(422);

            // An anomaly is delivered (to the log, always configured) and the delivery is counted in /metrics.
            double now = System.currentTimeMillis() / 1000.0;
            String batch = String.format(java.util.Locale.ROOT, """
                    {"host":"n1","agent_id":"a1","seq":1,"gpus":[{"ts":%1$.3f,"index":0,"uuid":"GPU-1",
                     "memory_total_bytes":85899345920,"memory_used_bytes":1000}],
                     "runs":[{"run_id":"pixart-1","pids":[1],"gpu_uuids":["GPU-1"]}],
                     "events":[{"ts":%1$.3f,"kind":"xid","gpu_uuid":"GPU-1","xid":79}]}""", now);
            assertThat(send(HttpRequest.newBuilder(base.resolve("/v1/samples")).header("Content-Type",
                    "application/json").POST(HttpRequest.BodyPublishers.ofString(batch))).statusCode()).isEqualTo(200);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() ->
                    send(HttpRequest.newBuilder(base.resolve("/metrics"))).body()
                            .contains("trainwatch_alert_deliveries_total{outcome=\"ok\"} 1"));
            assertThat(log).anySatisfy(line -> assertThat(line).startsWith("trainwatch alert FIRING critical xid_error"));
        }
    }
    @Test
    void aFailureAfterTheServerStartedStopsEverythingItHadStarted() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir);
        AtomicReference<CollectorStack> started = new AtomicReference<>();
        // The last start step fails once the server listens, the recorder runs and the history metrics are bound.
        assertThatThrownBy(() -> CollectorStack.start(config, log::add, builder -> { }, stack -> {
            started.set(stack);
            throw new IllegalStateException("injected failure\nwith a second line");
        })).isInstanceOf(CollectorServer.StartException.class)
                .hasMessage("the collector stopped again while starting: IllegalStateException: injected failure "
                        + "with a second line");

        CollectorStack stack = started.get();
        assertThat(stack).as("the failure came after the server had started").isNotNull();
        // The port is free again: the server stopped listening.
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", stack.server().port()));
        }
        // The database is closed (its next use fails), so a new collector can take over the directory.
        HistoryStore history = stack.history().orElseThrow();
        assertThatThrownBy(history::outcomes).isInstanceOf(RuntimeException.class);
        try (CollectorStack again = CollectorStack.start(config, log::add)) {
            assertThat(send(HttpRequest.newBuilder(again.server().uri().resolve("/healthz"))).statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void numbersIngestedJustBeforeAnOrderlyStopAreInTheHistory() throws Exception {
        // A long interval: only the shutdown path can have written the steps.
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir)
                .withSummaryInterval(java.time.Duration.ofMinutes(1));
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            double now = System.currentTimeMillis() / 1000.0;
            for (int step = 100; step <= 4_300; step += 2_100) {
                String steps = String.format(java.util.Locale.ROOT, "[{\"step\":%d,\"time_s\":1.5,\"ts\":%.3f}]",
                        step, now);
                assertThat(send(HttpRequest.newBuilder(base.resolve("/v1/runs/stopped/steps"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(steps))).statusCode()).isEqualTo(200);
            }
            // The first summary of a new run is written at once; the history's health is in /metrics. Micrometer
            // holds function meters' objects weakly: after a GC they must still read the writer, not NaN.
            System.gc();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() ->
                    send(HttpRequest.newBuilder(base.resolve("/metrics"))).body()
                            .matches("(?s).*\ntrainwatch_history_writes_total\\{outcome=\"ok\"} [1-9].*"));
            String metrics = send(HttpRequest.newBuilder(base.resolve("/metrics"))).body();
            assertThat(metrics).contains("\ntrainwatch_history_writes_total{outcome=\"failed\"} 0")
                    .contains("\ntrainwatch_history_dropped_summaries_total 0")
                    .containsPattern("\ntrainwatch_history_pending_runs [0-9]");
        } // what SIGTERM's shutdown hook does: close the server
        try (var store = dev.trainwatch.collector.history.HistoryStore.open(dataDir)) {
            JsonNode summary = Json.MAPPER.readTree(store.runs(10).get(0).summaryJson());
            assertThat(summary.get("run_id").asText()).isEqualTo("stopped");
            assertThat(summary.get("last_step").asLong()).isEqualTo(4_300);
        }
        assertThat(log).isEmpty();
    }
}
