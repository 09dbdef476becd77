package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.testing.TestCertificates;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code trainwatch collector --web-config}: serves https and says so; off loopback without TLS it says in one line
 * what it exposes; a web config it cannot use is one line and the usage status.
 */
@Timeout(120)
class CollectorTlsCommandIT {

    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private final CommandLine cli = TrainwatchCommand.newCommandLine(new PrintWriter(out, true),
            new PrintWriter(err, true));
    private final CollectorCommand command = (CollectorCommand) cli.getSubcommands().get("collector").getCommand();

    @Test
    void withAWebConfigItServesHttpsAndSaysNothingAboutPlainHttp() throws Exception {
        TestCertificates ca = TestCertificates.newCa(dir.resolve("pki"), "cli-test-ca");
        ca.issue("collector");
        Path web = dir.resolve("web.yml");
        Files.writeString(web, "tls_server_config:\n  cert_file: pki/collector.pem\n  key_file: pki/collector-key.pem\n");
        Path token = dir.resolve("token");
        Files.writeString(token, "s3cret\n");
        int code = runUntilStarted(server -> {
            HttpClient client = HttpClient.newBuilder().sslContext(ca.clientContext(null)).build();
            HttpResponse<String> health = client.send(HttpRequest.newBuilder(
                    URI.create("https://localhost:" + server.port() + "/healthz")).timeout(Duration.ofSeconds(10))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
        }, "collector", "--listen", "0.0.0.0:0", "--token-file", token.toString(), "--web-config", web.toString());
        assertThat(code).isZero();
        assertThat(out.toString()).contains("listening on https://").doesNotContain("plain HTTP");
    }

    @Test
    void offLoopbackWithoutTlsItSaysWhatItExposesInOneLine() throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "s3cret\n");
        int code = runUntilStarted(server -> { }, "collector", "--listen", "0.0.0.0:0", "--token-file",
                token.toString());
        assertThat(code).isZero();
        assertThat(out.toString().lines().filter(l -> l.contains("is plain HTTP"))).singleElement().asString()
                .contains("bearer token", "--web-config");
    }

    @Test
    void aWebConfigItCannotUseIsOneLine() throws Exception {
        Path web = dir.resolve("web.yml");
        Files.writeString(web, "tls_server_config:\n  cert_file: nowhere.pem\n  key_file: nowhere-key.pem\n");
        int code = cli.execute("collector", "--listen", "127.0.0.1:0", "--web-config", web.toString());
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString().strip()).contains("--web-config", "nowhere.pem", "does not exist")
                .doesNotContain("\n");
    }

    interface ThrowingConsumer<T> {
        void accept(T value) throws Exception;
    }

    private int runUntilStarted(ThrowingConsumer<CollectorServer> whileUp, String... args) throws Exception {
        CompletableFuture<CollectorServer> up = new CompletableFuture<>();
        command.onStarted = up::complete;
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> {
            int code = cli.execute(args);
            up.completeExceptionally(new IllegalStateException("exited with " + code + ": " + err));
            return code;
        });
        CollectorServer server = up.get(60, TimeUnit.SECONDS);
        try {
            whileUp.accept(server);
        } finally {
            command.stopRequested.countDown();
        }
        return exit.get(60, TimeUnit.SECONDS);
    }
}
