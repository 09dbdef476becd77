package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code trainwatch collector --data-dir} as a real process, stopped with SIGTERM and with SIGKILL and started
 * again on the same data directory: every run spec and every anomaly it acknowledged is still there, and so are the
 * observed numbers (last step, peak memory) — all of them after SIGTERM, and after SIGKILL those ingested more than
 * about two summary intervals (2 s each by default) before the kill.
 */
class CollectorRestartIT {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private Process collector;
    private int port;

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        if (collector != null) {
            collector.destroyForcibly();
        }
    }

    @Test
    void nothingAcknowledgedIsLostOnSigtermOrSigkill() throws Exception {
        port = PeerProcess.freePort();
        start();
        register("run-term", 79);
        JsonNode before = run("run-term");
        assertThat(activeKinds(before)).contains("xid_error");
        // Ingested just before SIGTERM, well within the summary interval: the orderly shutdown writes them.
        observe("run-term", 1_500, 61_000_000_000L);

        collector.destroy(); // SIGTERM
        assertThat(collector.waitFor(30, TimeUnit.SECONDS)).as("collector exits on SIGTERM").isTrue();
        start();
        JsonNode afterTerm = run("run-term");
        assertThat(afterTerm.at("/spec/batch").asInt()).isEqualTo(32);
        assertThat(afterTerm.at("/estimate/peak_memory_bytes").asLong()).isPositive();
        assertThat(activeKinds(afterTerm)).as("after SIGTERM: %s", afterTerm).contains("xid_error");
        assertObserved(afterTerm, 1_500, 61_000_000_000L);

        register("run-kill", 48);
        observe("run-kill", 2_500, 62_000_000_000L);
        // The numbers reach the database within the summary interval, not once a minute as before: the history
        // (read from SQLite) shows them within a few seconds of ingest.
        long ingested = System.nanoTime();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                .until(() -> storedRun("run-kill").path("last_step").asLong() == 2_500
                        && storedRun("run-kill").path("peak_memory_bytes").asLong() == 62_000_000_000L);
        System.out.printf(Locale.ROOT, "summary of run-kill in the history %.1f s after ingest%n",
                (System.nanoTime() - ingested) / 1e9);
        collector.destroyForcibly(); // SIGKILL: no shutdown hook runs
        collector.waitFor(30, TimeUnit.SECONDS);
        start();
        for (String runId : new String[] {"run-term", "run-kill"}) {
            JsonNode run = run(runId);
            assertThat(run.at("/spec/model").asText()).isEqualTo("dit-xl-2");
            assertThat(activeKinds(run)).as(runId).contains("xid_error");
        }
        assertObserved(run("run-term"), 1_500, 61_000_000_000L);
        assertObserved(run("run-kill"), 2_500, 62_000_000_000L);
        JsonNode history = get("/v1/history");
        assertThat(history.get("alerts").findValuesAsText("run_id")).contains("run-term", "run-kill");
    }

    /** Registers a run, attributes a GPU to it and reports an XID on that GPU. */
    private void register(String runId, int xid) throws Exception {
        String spec = """
                {"model":"dit-xl-2","gpu":"a100-80gb","gpus":1,"batch":32,"resolution":256,"precision":"bf16",
                 "optimizer":"adamw","ema":true,"features":"precomputed"}""";
        assertThat(send("PUT", "/v1/runs/" + runId, spec).statusCode()).isEqualTo(200);
        double now = System.currentTimeMillis() / 1000.0;
        String uuid = "GPU-" + runId;
        String batch = String.format(Locale.ROOT, """
                {"host":"node1","agent_id":"agent-%1$s","seq":1,
                 "gpus":[{"ts":%2$.3f,"index":0,"uuid":"%3$s","name":"NVIDIA A100-SXM4-80GB",
                          "memory_total_bytes":85899345920,"memory_used_bytes":40000000000,"utilization_ratio":0.97}],
                 "runs":[{"run_id":"%1$s","pids":[4242],"gpu_uuids":["%3$s"]}],
                 "events":[{"ts":%2$.3f,"kind":"xid","gpu_uuid":"%3$s","xid":%4$d}]}""", runId, now, uuid, xid);
        HttpResponse<String> response = send("POST", "/v1/samples", batch);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20)).until(() -> activeKinds(run(runId)).contains("xid_error"));
    }

    /** Reports a step and a new peak of device memory for a run registered with {@link #register}. */
    private void observe(String runId, long step, long memoryBytes) throws Exception {
        double now = System.currentTimeMillis() / 1000.0;
        String steps = String.format(Locale.ROOT, "[{\"step\":%d,\"time_s\":1.25,\"ts\":%.3f}]", step, now);
        HttpResponse<String> response = send("POST", "/v1/runs/" + runId + "/steps", steps);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        String batch = String.format(Locale.ROOT, """
                {"host":"node1","agent_id":"agent-%1$s","seq":2,
                 "gpus":[{"ts":%2$.3f,"index":0,"uuid":"GPU-%1$s","name":"NVIDIA A100-SXM4-80GB",
                          "memory_total_bytes":85899345920,"memory_used_bytes":%3$d,"utilization_ratio":0.97}],
                 "runs":[{"run_id":"%1$s","pids":[4242],"gpu_uuids":["GPU-%1$s"]}]}""", runId, now, memoryBytes);
        response = send("POST", "/v1/samples", batch);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertObserved(run(runId), step, memoryBytes);
    }

    private static void assertObserved(JsonNode run, long step, long peakBytes) {
        String what = run.path("run_id").asText() + " observed " + run.path("observed");
        assertThat(run.at("/observed/last_step").asLong()).as("last step of %s", what).isEqualTo(step);
        assertThat(run.at("/observed/peak_memory_bytes").asLong()).as("peak memory of %s", what).isEqualTo(peakBytes);
    }

    /** The run as {@code GET /v1/history} shows it (read from the database), or an empty node. */
    private JsonNode storedRun(String runId) throws Exception {
        for (JsonNode run : get("/v1/history").path("runs")) {
            if (runId.equals(run.path("run_id").asText())) {
                return run;
            }
        }
        return Json.MAPPER.createObjectNode();
    }

    private void start() throws IOException {
        Path jar = ProjectFiles.root().resolve("cli/target/trainwatch-all.jar");
        assertThat(jar).as("the shaded jar (built by the cli module's package phase)").exists();
        collector = new ProcessBuilder(CollectorJvm.command(jar, java.util.List.of(),
                "--listen", "127.0.0.1:" + port, "--data-dir", dir.resolve("data").toString()))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("collector.log").toFile()))
                .start();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> send("GET", "/healthz", null).statusCode() == 200);
    }

    private JsonNode run(String runId) throws Exception {
        HttpResponse<String> response = send("GET", "/v1/runs/" + runId, null);
        assertThat(response.statusCode()).as("GET /v1/runs/%s: %s; log: %s", runId, response.body(),
                Files.readString(dir.resolve("collector.log"))).isEqualTo(200);
        return Json.MAPPER.readTree(response.body());
    }

    private JsonNode get(String path) throws Exception {
        return Json.MAPPER.readTree(send("GET", path, null).body());
    }

    private static java.util.List<String> activeKinds(JsonNode run) {
        java.util.List<String> kinds = new java.util.ArrayList<>();
        for (JsonNode anomaly : run.path("anomalies")) {
            if (anomaly.path("active").asBoolean()) {
                kinds.add(anomaly.path("kind").asText());
            }
        }
        return kinds;
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (body != null) {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
