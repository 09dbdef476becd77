package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunFailure;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing a request does waits on the event loop, and no ingest or read waits for the history database or any
 * other listener: while another process holds the database locked (a backup, a `sqlite3` shell, a stalled disk) and
 * a listener hangs, a flood of 3,000 new runs, failures that raise anomalies (written to the history), run listings,
 * health checks and scrapes all answer, and Vert.x never reports a blocked event loop. Once the lock goes, the
 * history is written again.
 */
@Isolated
class EventLoopNeverWaitsTest {
    private static final int RUNS = 3_000;
    private static final int RUNS_PER_BATCH = 100;

    @TempDir
    Path dataDir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final List<String> blocked = Collections.synchronizedList(new ArrayList<>());

    @Test
    void aLockedHistoryDatabaseAndAFloodOfRunsHoldUpNoRequest() throws Exception {
        Handler watch = new Handler() {
            @Override
            public void publish(LogRecord record) {
                String message = record.getMessage();
                if (message != null && message.contains("has been blocked")) {
                    blocked.add(message);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger vertxLog = Logger.getLogger("io.vertx");
        vertxLog.addHandler(watch);
        // Vert.x warns when an event loop runs one task longer than this.
        Vertx vertx = Vertx.vertx(new VertxOptions().setBlockedThreadCheckInterval(100)
                .setMaxEventLoopExecuteTime(TimeUnit.SECONDS.toNanos(2)));
        CollectorConfig defaults = CollectorConfig.defaults();
        CollectorConfig.Limits l = defaults.limits();
        // Room for every run of the flood: each batch is taken (200), none refused at the run limit.
        CollectorConfig config = defaults.withListen("127.0.0.1", 0).withDataDir(dataDir)
                .withLimits(new CollectorConfig.Limits(l.maxBodyBytes(), l.maxInflatedBytes(), l.maxGpuSamples(),
                        l.maxStepEvents(), RUNS, l.maxGpus(), l.maxAgents(), l.maxSpecs()));
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        // A listener that hangs until released: were any request to wait for listeners, it would never answer.
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger heard = new java.util.concurrent.atomic.AtomicInteger();
        dev.trainwatch.collector.state.FleetListener stalled = new dev.trainwatch.collector.state.FleetListener() {
            @Override
            public void onAnomalyRaised(String runId, dev.trainwatch.collector.detect.Anomaly anomaly) {
                heard.incrementAndGet();
                try {
                    release.await(120, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try (CollectorStack stack = CollectorStack.start(config, log::add, b -> b.vertx(vertx).listener(stalled))) {
            try {
                floodWhileLocked(stack, release, heard);
            } finally {
                // Before the stack closes: closing waits for the listener, which waits for this.
                release.countDown();
            }
        } finally {
            release.countDown();
            vertxLog.removeHandler(watch);
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private void floodWhileLocked(CollectorStack stack, java.util.concurrent.CountDownLatch release,
            java.util.concurrent.atomic.AtomicInteger heard) throws Exception {
        {
            URI base = stack.server().uri();
            try (Connection other = DriverManager.getConnection("jdbc:sqlite:" + dataDir.resolve("trainwatch.db"));
                 Statement st = other.createStatement()) {
                // Another process takes the database: every write of the collector now waits up to the busy timeout.
                st.execute("BEGIN EXCLUSIVE");
                List<CompletableFuture<Long>> requests = new ArrayList<>();
                long seq = 0;
                for (int first = 0; first < RUNS; first += RUNS_PER_BATCH) {
                    requests.add(timed(post(base, "/v1/samples", flood(++seq, first))));
                    requests.add(timed(get(base, "/healthz")));
                    if (first % 1_000 == 0) {
                        requests.add(timed(get(base, "/v1/runs")));
                        requests.add(timed(get(base, "/metrics")));
                    }
                }
                for (CompletableFuture<Long> r : requests) {
                    r.get(60, TimeUnit.SECONDS);
                }
                // Every request above answered while the database was still locked and a listener still hung.
                assertThat(heard.get()).as("the hanging listener was reached").isPositive();
                assertThat(release.getCount()).isOne();
                st.execute("ROLLBACK");
                release.countDown();
            }
            assertThat(blocked).as("Vert.x blocked-thread warnings").isEmpty();

            JsonNode health = Json.MAPPER.readTree(http.send(HttpRequest.newBuilder(base.resolve("/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertThat(health.get("runs").asInt()).isPositive();
            // What waited is written once the database is free again: the failures' anomalies reach the history.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int recorded = 0;
            while (System.nanoTime() < deadline) {
                JsonNode history = Json.MAPPER.readTree(http.send(
                        HttpRequest.newBuilder(base.resolve("/v1/history?limit=1000")).build(),
                        HttpResponse.BodyHandlers.ofString()).body());
                recorded = history.get("alerts").size();
                if (recorded > 0) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(recorded).as("anomalies written after the lock went").isPositive();
        }
    }

    /** One agent batch that brings {@link #RUNS_PER_BATCH} new runs, each on its own GPU, and fails each tenth. */
    private static byte[] flood(long seq, int first) throws Exception {
        double ts = System.currentTimeMillis() / 1000.0;
        List<GpuSample> gpus = new ArrayList<>();
        List<RunAttribution> runs = new ArrayList<>();
        List<AgentEvent> events = new ArrayList<>();
        for (int i = first; i < first + RUNS_PER_BATCH; i++) {
            String uuid = "GPU-flood-" + i;
            gpus.add(Samples.gpu(ts, i % 64, uuid, 10L << 30, 0.9));
            runs.add(Samples.attribution("flood-" + i, List.of(uuid)));
            if (i % 10 == 0) {
                events.add(new AgentEvent(ts, "run_failed", null, null, "flood-" + i, null,
                        new RunFailure("exception", "ValueError: bad batch", 1, null, 0,
                                Map.of("type", "ValueError", "message", "bad batch"), List.of("ValueError: bad batch")), null, null, null));
            }
        }
        AgentBatch batch = Samples.batch("flood-node", "flood-agent", seq, gpus, runs, events);
        return Json.MAPPER.writeValueAsBytes(batch);
    }

    private CompletableFuture<HttpResponse<String>> post(URI base, String path, byte[] body) {
        return http.sendAsync(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<HttpResponse<String>> get(URI base, String path) {
        return http.sendAsync(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The request's time from sending to its answer, in ms; a status other than 200 fails it. */
    private static CompletableFuture<Long> timed(CompletableFuture<HttpResponse<String>> request) {
        long start = System.nanoTime();
        return request.thenApply(r -> {
            assertThat(r.statusCode()).as(r.uri() + " " + r.body()).isEqualTo(200);
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        });
    }
}
