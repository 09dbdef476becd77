package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.agent.ship.ClientTls;
import dev.trainwatch.agent.ship.HttpTransport;
import dev.trainwatch.agent.ship.Payload;
import dev.trainwatch.agent.ship.Shipment;
import dev.trainwatch.agent.ship.Transport;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.http.tls.WebConfig;
import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.testing.TestCertificates;
import dev.trainwatch.protocol.testing.Samples;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's transport reaches a collector that serves mutual TLS from a web config: a real handshake with
 * certificates made at test time, the batch applied; the certificate speaks only for the node it names; an agent
 * without its certificate is refused at the handshake, and one that speaks plain HTTP to the port gets no answer.
 */
@Timeout(180)
class TlsAgentToCollectorIT {

    @TempDir
    Path dir;

    @Test
    void anAgentWithItsCertificateDeliversOverMutualTlsAndNoOtherDoes() throws Exception {
        TestCertificates ca = TestCertificates.newCa(dir.resolve("pki"), "trainwatch-ca");
        TestCertificates.Issued server = ca.issue("collector");
        TestCertificates.Issued node = ca.issue("node-7");
        Path web = dir.resolve("web.yml");
        Files.writeString(web, "tls_server_config:\n  cert_file: pki/collector.pem\n  key_file: pki/collector-key.pem\n"
                + "  client_ca_file: pki/ca.pem\n  client_auth_type: RequireAndVerifyClientCert\n");
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        try (CollectorStack collector = CollectorStack.start(config, line -> { },
                builder -> builder.webConfig(WebConfig.read(web), Duration.ofSeconds(5)))) {
            URI https = URI.create("https://localhost:" + collector.server().port());
            Transport.Response answer = send(https, new ClientTls(ca.caFile(), node.certFile(), node.keyFile()), 1,
                    "node-7");
            assertThat(answer.status()).isEqualTo(200);
            assertThat(collector.fleet().agents()).extracting(AgentView::host).containsExactly("node-7");
            // node-7's certificate cannot speak for another node.
            Transport.Response forged = send(https, new ClientTls(ca.caFile(), node.certFile(), node.keyFile()), 2,
                    "node-8");
            assertThat(forged.status()).isEqualTo(403);
            assertThat(forged.body()).contains("names node-7", "node-8");

            assertThatThrownBy(() -> send(https, new ClientTls(ca.caFile(), null, null), 3, "node-7"))
                    .isInstanceOf(IOException.class);
            URI plain = URI.create("http://127.0.0.1:" + collector.server().port());
            assertThatThrownBy(() -> send(plain, ClientTls.NONE, 4, "node-7")).isInstanceOf(IOException.class);
            assertThat(collector.fleet().agents()).extracting(AgentView::batches).containsExactly(1L);
        }
    }

    private static Transport.Response send(URI collector, ClientTls tls, long seq, String host) throws Exception {
        HttpTransport transport = new HttpTransport(collector, null, Duration.ofSeconds(10), Clock.systemUTC(),
                tls.configured() ? tls.socketFactory() : null);
        Payload payload = Payload.samples(Samples.batch(host, host + "-a1b2c3", seq,
                List.of(Samples.gpu(System.currentTimeMillis() / 1000.0, 0, "GPU-tls", 1L << 30, 0.5)),
                List.of(), List.of()));
        return transport.send(new Shipment(seq, payload.method(), payload.path(), payload.gzipBody(),
                payload.what()));
    }
}
