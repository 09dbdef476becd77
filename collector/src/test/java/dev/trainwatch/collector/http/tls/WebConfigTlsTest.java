package dev.trainwatch.collector.http.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.testing.TestCertificates;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector serves TLS from an exporter-toolkit web config: clients that trust its CA get answers, plain HTTP to
 * the port gets nothing, mutual TLS refuses a client without a certificate, and a renewed certificate is served
 * without a restart.
 */
@Timeout(120)
class WebConfigTlsTest {

    @TempDir
    Path dir;

    private static final CollectorConfig CONFIG = CollectorConfig.defaults().withListen("127.0.0.1", 0);

    @Test
    void aClientThatTrustsTheCaIsAnsweredAndPlainHttpGetsNothing() throws Exception {
        TestCertificates ca = TestCertificates.newCa(dir.resolve("pki"), "trainwatch-test-ca");
        TestCertificates.Issued server = ca.issue("collector");
        Path web = webConfig(server, "");
        try (CollectorServer collector = start(web)) {
            assertThat(collector.uri().getScheme()).isEqualTo("https");
            assertThat(health(ca.clientContext(null), collector.port())).isEqualTo(200);
            assertThat(plainHttpAnswer(collector.port())).doesNotContain("HTTP/");
        }
    }

    @Test
    void mutualTlsRefusesAClientWithoutACertificate() throws Exception {
        TestCertificates ca = TestCertificates.newCa(dir.resolve("pki"), "trainwatch-test-ca");
        TestCertificates.Issued server = ca.issue("collector");
        TestCertificates.Issued node = ca.issue("node-1");
        Path web = webConfig(server, "  client_ca_file: pki/ca.pem\n"
                + "  client_auth_type: RequireAndVerifyClientCert\n  min_version: TLS13\n");
        try (CollectorServer collector = start(web)) {
            assertThat(health(ca.clientContext(node), collector.port())).isEqualTo(200);
            assertThatThrownBy(() -> health(ca.clientContext(null), collector.port())).isInstanceOf(IOException.class);
        }
    }

    @Test
    void aRenewedCertificateIsServedWithoutARestart() throws Exception {
        TestCertificates first = TestCertificates.newCa(dir.resolve("pki"), "first-ca");
        TestCertificates.Issued server = first.issue("collector");
        Path web = webConfig(server, "");
        TestCertificates second = TestCertificates.newCa(dir.resolve("pki2"), "second-ca");
        TestCertificates.Issued renewed = second.issue("collector");
        try (CollectorServer collector = start(web)) {
            assertThat(health(first.clientContext(null), collector.port())).isEqualTo(200);
            Files.copy(renewed.keyFile(), server.keyFile(), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(renewed.certFile(), server.certFile(), StandardCopyOption.REPLACE_EXISTING);
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                    .until(() -> health(second.clientContext(null), collector.port()) == 200);
        }
    }

    @Test
    void aWebConfigWithAKeyTrainwatchDoesNotServeIsRefusedInOneLine() throws Exception {
        Path web = dir.resolve("web.yml");
        Files.writeString(web, "basic_auth_users:\n  alice: $2y$10$abc\n");
        assertThatThrownBy(() -> WebConfig.read(web)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'basic_auth_users' is not supported");
        Files.writeString(web, "tls_server_config:\n  cert_file: missing.pem\n  key_file: missing-key.pem\n");
        assertThatThrownBy(() -> WebConfig.read(web)).hasMessageContaining("does not exist");
        Files.writeString(web, "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Sometimes\n");
        assertThatThrownBy(() -> WebConfig.read(web)).hasMessageContaining("'Sometimes' is none of");
        Files.writeString(web, "");
        assertThat(WebConfig.read(web).tls()).isNull();
    }

    private CollectorServer start(Path web) {
        return CollectorServer.builder(CONFIG).jvmMetrics(false)
                .webConfig(WebConfig.read(web), Duration.ofMillis(200)).start();
    }

    private Path webConfig(TestCertificates.Issued server, String more) throws IOException {
        Path web = dir.resolve("web.yml");
        Files.writeString(web, "tls_server_config:\n  cert_file: " + dir.relativize(server.certFile()) + "\n"
                + "  key_file: " + dir.relativize(server.keyFile()) + "\n" + more);
        return web;
    }

    private static int health(SSLContext context, int port) throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(5)).build();
        return client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + "/healthz"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** What a plain HTTP request to the port reads back before the connection ends. */
    private static String plainHttpAnswer(int port) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            ByteArrayOutputStream read = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[256];
            int n;
            try {
                while ((n = in.read(buffer)) > 0) {
                    read.write(buffer, 0, n);
                }
            } catch (IOException reset) {
                // The server closed the connection: nothing more to read.
            }
            return read.toString(StandardCharsets.ISO_8859_1);
        }
    }
}
