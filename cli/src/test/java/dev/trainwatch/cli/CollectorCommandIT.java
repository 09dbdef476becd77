package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class CollectorCommandIT {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final CommandLine cli = TrainwatchCommand.newCommandLine(new PrintWriter(out, true),
            new PrintWriter(err, true));
    private final CollectorCommand command = (CollectorCommand) cli.getSubcommands().get("collector").getCommand();
    private final HttpClient http = HttpClient.newHttpClient();

    /** Runs the command in the background until it has started, then stops it and returns its exit code. */
    private int runUntilStarted(AtomicReference<CollectorServer> started, ThrowingConsumer<CollectorServer> whileUp,
                                String... args) throws Exception {
        CompletableFuture<CollectorServer> up = new CompletableFuture<>();
        command.onStarted = up::complete;
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            int code = cli.execute(args);
            up.completeExceptionally(new IllegalStateException("exited with " + code + ": " + err));
            return code;
        });
        CollectorServer server = up.get(30, TimeUnit.SECONDS);
        started.set(server);
        try {
            whileUp.accept(server);
        } finally {
            command.stopRequested.countDown();
        }
        return exit.get(30, TimeUnit.SECONDS);
    }

    interface ThrowingConsumer<T> {
        void accept(T value) throws Exception;
    }

    private HttpResponse<String> get(URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void startsSaysWhereAndStopsCleanly() throws Exception {
        AtomicReference<CollectorServer> server = new AtomicReference<>();
        int code = runUntilStarted(server, s -> assertThat(get(URI.create(s.uri() + "/healthz")).statusCode())
                .isEqualTo(200), "collector", "--listen", "127.0.0.1:0");
        assertThat(code).isZero();
        assertThat(out.toString()).startsWith("trainwatch collector listening on http://127.0.0.1:"
                + server.get().port());
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void portInUseIsOneLineAndExit1() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int code = cli.execute("collector", "--listen", "127.0.0.1:" + taken.getLocalPort());
            assertThat(code).isEqualTo(ExitCodes.FAILURE);
            assertThat(err.toString().lines()).containsExactly("trainwatch: cannot listen on 127.0.0.1:"
                    + taken.getLocalPort() + ": address already in use (another collector running? pick another"
                    + " port with --listen)");
        }
    }

    @Test
    void aSecondCollectorOnTheSameDataDirectoryRefusesInOneLine(@TempDir Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path stdout = dir.resolve("stdout");
        Path data = dir.resolve("data");
        Process first = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                TrainwatchCommand.class.getName(), "collector", "--listen", "127.0.0.1:0", "--data-dir",
                data.toString()).redirectOutput(stdout.toFile()).redirectError(dir.resolve("stderr").toFile()).start();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(60))
                    .until(() -> Files.readString(stdout).contains("listening on http://127.0.0.1:"));
            int code = cli.execute("collector", "--listen", "127.0.0.1:0", "--data-dir", data.toString());
            assertThat(code).isEqualTo(ExitCodes.FAILURE);
            assertThat(err.toString().lines()).containsExactly("trainwatch: data directory " + data
                    + " is in use by another collector (pid " + first.pid() + "): stop that one, or give this one"
                    + " another --data-dir");
        } finally {
            first.destroy();
            first.waitFor(30, TimeUnit.SECONDS);
            first.destroyForcibly();
        }
    }

    @Test
    void refusesAnOpenNonLoopbackAddress() {
        int code = cli.execute("collector", "--listen", "0.0.0.0:0");
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString().lines().findFirst().orElse(""))
                .startsWith("trainwatch: refusing to listen on 0.0.0.0 without a token");
    }

    @Test
    void withATokenItListensAnywhereAndIngestNeedsTheToken(@TempDir Path dir) throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), "s3cret-token\n");
        AtomicReference<CollectorServer> server = new AtomicReference<>();
        int code = runUntilStarted(server, s -> {
            URI samples = URI.create("http://127.0.0.1:" + s.port() + "/v1/samples");
            HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(samples)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);
            HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(samples)
                    .header("Content-Type", "application/json").header("Authorization", "Bearer s3cret-tokeN")
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(wrong.body()).isEqualTo("{\"error\":\"wrong bearer token\"}");
            HttpResponse<String> authorised = http.send(HttpRequest.newBuilder(samples)
                    .header("Content-Type", "application/json").header("Authorization", "Bearer s3cret-token")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(authorised.statusCode()).isEqualTo(200);
            // Scrapes and health checks stay open: Prometheus and load balancers do not send the token.
            assertThat(get(URI.create("http://127.0.0.1:" + s.port() + "/metrics")).statusCode()).isEqualTo(200);
        }, "collector", "--listen", "0.0.0.0:0", "--token-file", tokenFile.toString());
        assertThat(code).isZero();
    }

    @Test
    void badTokenFilesAndUrlsAreUsageErrors(@TempDir Path dir) throws IOException {
        Path empty = Files.writeString(dir.resolve("empty"), "  \n");
        assertThat(cli.execute("collector", "--token-file", empty.toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("is empty");
        assertThat(cli.execute("collector", "--token-file", dir.resolve("missing").toString()))
                .isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("does not exist");
        assertThat(cli.execute("collector", "--webhook", "ftp://x")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--webhook wants an http(s) URL");
        assertThat(cli.execute("collector", "--listen", "localhost")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--listen wants HOST:PORT");
        assertThat(cli.execute("collector", "--summary-interval", "soon")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--summary-interval: 'soon' is not a duration");
        assertThat(cli.execute("collector", "--summary-interval", "2m")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--summary-interval: 2m is above the maximum of 1m");
    }

    @Test
    void theSummaryIntervalReachesTheConfig() {
        cli.parseArgs("collector", "--summary-interval", "500ms");
        assertThat(command.config().summaryInterval()).isEqualTo(Duration.ofMillis(500));
        cli.parseArgs("collector");
        assertThat(command.config().summaryInterval()).isEqualTo(CollectorConfig.DEFAULT_SUMMARY_INTERVAL);
    }

    @Test
    void theCapsAndTheGpuSeriesChoiceReachTheConfig() {
        cli.parseArgs("collector");
        CollectorConfig defaults = command.config();
        assertThat(defaults.limits().maxGpus()).isEqualTo(CollectorConfig.Limits.DEFAULT_MAX_GPUS);
        assertThat(defaults.limits().maxSpecs()).isEqualTo(CollectorConfig.Limits.DEFAULT_MAX_SPECS);
        assertThat(defaults.exportsGpuSeries()).as("a small fleet: per-GPU series on").isTrue();

        cli.parseArgs("collector", "--max-gpus", "65536", "--max-agents", "8192", "--max-runs", "2048",
                "--max-specs", "512");
        CollectorConfig large = command.config();
        assertThat(large.limits().maxGpus()).isEqualTo(65_536);
        assertThat(large.limits().maxAgents()).isEqualTo(8_192);
        assertThat(large.limits().maxRuns()).isEqualTo(2_048);
        assertThat(large.limits().maxSpecs()).isEqualTo(512);
        assertThat(large.exportsGpuSeries()).as("a large fleet: the agents serve them").isFalse();
        assertThat(CollectorServer.fleetSettings(large).maxGpus()).isEqualTo(65_536);

        cli.parseArgs("collector", "--max-gpus", "65536", "--gpu-series", "on");
        assertThat(command.config().exportsGpuSeries()).isTrue();
        cli.parseArgs("collector", "--gpu-series", "off");
        assertThat(command.config().exportsGpuSeries()).isFalse();
    }

    @Test
    void aBadCapOrGpuSeriesChoiceIsAUsageError() {
        assertThat(cli.execute("collector", "--max-gpus", "0")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--max-gpus");
        assertThat(cli.execute("collector", "--gpu-series", "maybe")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--gpu-series wants auto, on or off, got 'maybe'");
    }

    @Test
    void sigtermStopsTheProcessCleanly(@TempDir Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path stdout = dir.resolve("stdout");
        Path stderr = dir.resolve("stderr");
        Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                TrainwatchCommand.class.getName(), "collector", "--listen", "127.0.0.1:0")
                .redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(60))
                    .until(() -> Files.readString(stdout).contains("listening on http://127.0.0.1:"));
            process.destroy(); // SIGTERM
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(Files.readAllLines(stdout)).hasSize(2).last().isEqualTo("trainwatch collector stopped");
            assertThat(Files.readString(stderr)).doesNotContain("Exception");
            assertThat(process.exitValue()).isEqualTo(143);
        } finally {
            process.destroyForcibly();
        }
    }
}
