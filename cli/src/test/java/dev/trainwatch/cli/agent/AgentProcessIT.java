package dev.trainwatch.cli.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunAttribution;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code trainwatch agent} as a real process (its own JVM, the real main) reading the fake NVML library: one
 * sample with --once, a run that ends, and SIGTERM while the collector is away.
 */
class AgentProcessIT {

    @TempDir
    Path dir;

    final List<AgentBatch> batches = Collections.synchronizedList(new ArrayList<>());
    final List<Process> processes = new ArrayList<>();
    HttpServer server;

    @AfterEach
    void tearDown() {
        processes.forEach(Process::destroyForcibly);
        if (server != null) {
            server.stop(0);
        }
    }

    static Path fakeNvml() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("agent/target/fake-nvml/libnvidia-ml.so.1");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("fake NVML not built: build the agent module's tests first");
    }

    Path scenario() throws IOException {
        Path scenario = dir.resolve("node.scenario");
        Files.writeString(scenario, String.join("\n",
                "0 - driver 535.261.03",
                "0 0 uuid GPU-11111111-2222-3333-4444-555555555555",
                "0 0 name NVIDIA A100-SXM4-80GB",
                "0 1 uuid GPU-66666666-7777-8888-9999-000000000000",
                "0 1 name NVIDIA A100-SXM4-80GB",
                "0 * memory_total 85899345920",
                "0 * memory_used 42949672960",
                "0 * util_gpu 97",
                "0 * temperature_c 61",
                "0 * power_mw 312500",
                "") + "\n");
        return scenario;
    }

    Process trainwatch(Map<String, String> env, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), "dev.trainwatch.cli.TrainwatchCommand"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("stderr.txt").toFile()));
        builder.environment().putAll(env);
        Process process = builder.start();
        processes.add(process);
        return process;
    }

    void startCollector(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        server.createContext("/v1/", exchange -> {
            try (exchange; InputStream in = new GZIPInputStream(exchange.getRequestBody())) {
                if (exchange.getRequestURI().getPath().equals("/v1/samples")) {
                    batches.add(Json.MAPPER.readValue(in.readAllBytes(), AgentBatch.class));
                }
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
    }

    @Test
    void onceJsonPrintsTheGpusArray() throws Exception {
        Process process = trainwatch(Map.of("FAKE_NVML_SCENARIO", scenario().toString()),
                "agent", "--once", "--json", "--nvml-library", fakeNvml().toString());
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(Files.readString(dir.resolve("stderr.txt"))).isZero();
        assertThat(out.lines()).hasSize(1);
        JsonNode gpus = Json.MAPPER.readTree(out);
        assertThat(gpus.isArray()).isTrue();
        assertThat(gpus).hasSize(2);
        assertThat(gpus.get(1).get("uuid").asText()).isEqualTo("GPU-66666666-7777-8888-9999-000000000000");
        assertThat(gpus.get(0).get("memory_used_bytes").asLong()).isEqualTo(42949672960L);
        assertThat(gpus.get(0).get("utilization_ratio").asDouble()).isEqualTo(0.97);
    }

    /**
     * Issue #45: the agent is its node's exporter (--listen) and ships to a pair of collectors (--collector twice), the
     * second of which is away at first and gets its backlog once it is there.
     */
    @Test
    void withListenAndTwoCollectorsTheAgentServesItsGpusAndBothCollectorsGetEveryBatch() throws Exception {
        startCollector(0);
        int secondPort = freePort();
        int listenPort = freePort();
        Process agent = trainwatch(Map.of("FAKE_NVML_SCENARIO", scenario().toString()),
                "agent", "--collector", "http://127.0.0.1:" + server.getAddress().getPort(),
                "--collector", "http://127.0.0.1:" + secondPort, "--listen", "127.0.0.1:" + listenPort,
                "--interval", "200ms", "--nvml-library", fakeNvml().toString(),
                "--spool-dir", dir.resolve("spool").toString(), "--host", "test-node");
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest scrape = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + listenPort + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build();
        String body = await().atMost(60, TimeUnit.SECONDS).ignoreExceptions().until(
                () -> client.send(scrape, HttpResponse.BodyHandlers.ofString()).body(),
                b -> b.contains("trainwatch_gpu_memory_used_bytes{"));
        assertThat(body).contains("trainwatch_gpu_memory_used_bytes{gpu=\"1\",gpu_uuid=\""
                + "GPU-66666666-7777-8888-9999-000000000000\",host=\"test-node\"} 4.294967296E10");
        Process lint = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true)
                .redirectInput(Files.writeString(dir.resolve("agent.prom"), body).toFile()).start();
        String lintOutput = new String(lint.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(lint.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(lint.exitValue()).as("promtool check metrics: " + lintOutput).isZero();

        List<AgentBatch> second = Collections.synchronizedList(new ArrayList<>());
        await().atMost(30, TimeUnit.SECONDS).until(() -> batches.size() >= 5
                && Files.list(dir.resolve("spool").resolve("collector-2")).findAny().isPresent());
        HttpServer late = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), secondPort), 16);
        late.createContext("/v1/", exchange -> {
            try (exchange; InputStream in = new GZIPInputStream(exchange.getRequestBody())) {
                if (exchange.getRequestURI().getPath().equals("/v1/samples")) {
                    second.add(Json.MAPPER.readValue(in.readAllBytes(), AgentBatch.class));
                }
                exchange.sendResponseHeaders(200, -1);
            }
        });
        late.start();
        try {
            await().atMost(60, TimeUnit.SECONDS).until(() -> second.size() >= 5);
            agent.destroy();
            assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
            List<Long> firstSeqs;
            synchronized (batches) {
                firstSeqs = batches.stream().map(AgentBatch::seq).toList();
            }
            List<Long> secondSeqs;
            synchronized (second) {
                secondSeqs = second.stream().map(AgentBatch::seq).toList();
            }
            assertThat(secondSeqs).as("the late collector got the backlog first, in order").isSorted()
                    .startsWith(firstSeqs.get(0));
        } finally {
            late.stop(0);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void attachedToARunTheAgentShipsUntilTheRunEndsThenExits() throws Exception {
        startCollector(0);
        // The run ends once the agent has seen it (a run that ends while the agent's JVM starts is never seen: the
        // agent then exits at once, reporting nothing).
        Process run = new ProcessBuilder("sleep", "120").start();
        processes.add(run);
        Process agent = trainwatch(Map.of("FAKE_NVML_SCENARIO", scenario().toString()),
                "agent", "--collector", "http://127.0.0.1:" + server.getAddress().getPort(),
                "--attach", Long.toString(run.pid()), "--run-id", "attached-run", "--interval", "200ms",
                "--nvml-library", fakeNvml().toString(), "--spool-dir", dir.resolve("spool").toString(),
                "--host", "test-node");
        await().atMost(60, TimeUnit.SECONDS).until(() -> {
            synchronized (batches) {
                return batches.stream().anyMatch(b -> !b.runs().isEmpty());
            }
        });
        run.destroy();
        assertThat(agent.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as(Files.readString(dir.resolve("stderr.txt"))).isZero();

        assertThat(batches).isNotEmpty();
        assertThat(batches).extracting(AgentBatch::host).containsOnly("test-node");
        List<RunAttribution> runs = batches.stream().flatMap(b -> b.runs().stream()).toList();
        assertThat(runs).extracting(RunAttribution::runId).containsOnly("attached-run");
        assertThat(runs.get(0).pids()).containsExactly(run.pid());
        assertThat(runs).filteredOn(r -> Boolean.TRUE.equals(r.ended())).hasSize(1);
        assertThat(batches.stream().flatMap(b -> b.events().stream()).filter(e -> e.kind().equals("run_ended")))
                .hasSize(1);
    }

    @Test
    void sigtermWhileTheCollectorIsAwaySpoolsAndExits() throws Exception {
        startCollector(0);
        int port = server.getAddress().getPort();
        Path spool = dir.resolve("spool");
        Process agent = trainwatch(Map.of("FAKE_NVML_SCENARIO", scenario().toString()),
                "agent", "--collector", "http://127.0.0.1:" + port, "--interval", "100ms",
                "--nvml-library", fakeNvml().toString(), "--spool-dir", spool.toString());
        await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= 3);
        server.stop(0);
        server = null;
        await().atMost(30, TimeUnit.SECONDS).until(() -> spooled(spool) >= 3);
        agent.destroy();
        assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as("SIGTERM is an orderly stop: exit 0 (was 143)").isZero();
        long left = spooled(spool);
        assertThat(left).isGreaterThanOrEqualTo(3);

        // A new agent on the same spool replays it first, under the same agent id.
        String id = Files.readString(spool.resolve("agent-id")).strip();
        startCollector(port);
        int before = batches.size();
        Process again = trainwatch(Map.of("FAKE_NVML_SCENARIO", scenario().toString()),
                "agent", "--collector", "http://127.0.0.1:" + port, "--interval", "100ms",
                "--nvml-library", fakeNvml().toString(), "--spool-dir", spool.toString());
        await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= before + left + 2);
        again.destroy();
        again.waitFor(30, TimeUnit.SECONDS);
        List<Long> seqs;
        synchronized (batches) {
            assertThat(batches).extracting(AgentBatch::agentId).containsOnly(id);
            seqs = batches.stream().map(AgentBatch::seq).toList();
        }
        // Arrival order never goes back, so a collector that ignores seq <= the last applied one loses nothing;
        // a batch whose answer was cut off by the stop may arrive twice (the collector drops the replay).
        assertThat(seqs).as(Files.readString(dir.resolve("stderr.txt"))).isSorted();
        java.util.TreeSet<Long> distinct = new java.util.TreeSet<>(seqs);
        java.util.SortedSet<Long> firstAgent = distinct.headSet(1000L);
        assertThat(firstAgent).containsExactlyElementsOf(
                java.util.stream.LongStream.rangeClosed(0, firstAgent.last()).boxed().toList());
        assertThat(distinct.tailSet(1000L)).isNotEmpty().first().isEqualTo(1000L);
    }

    static long spooled(Path spool) throws IOException {
        try (var files = Files.list(spool)) {
            return files.filter(p -> p.toString().endsWith(".json.gz")).count();
        }
    }
}
