package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP transport against a real HTTP server on loopback. */
class HttpTransportTest {

    private HttpServer server;
    private final List<String> received = new CopyOnWriteArrayList<>();
    private final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
    private volatile int status = 200;
    private volatile String answer = "{\"ok\":true}";

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            clientPorts.add(exchange.getRemoteAddress().getPort());
            String json;
            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
                json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            received.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                    + exchange.getRequestHeaders().getFirst("Content-Encoding") + " "
                    + exchange.getRequestHeaders().getFirst("Authorization") + " " + json);
            byte[] out = answer.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, out.length);
            exchange.getResponseBody().write(out);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
    }

    private static Shipment shipment(String method, String path, String json) {
        return new Shipment(1, method, path, Payload.gzipJson(json), "test");
    }

    @Test
    void sendsGzipJsonWithTheTokenAndKeepsTheConnection() throws Exception {
        HttpTransport transport = new HttpTransport(uri(), () -> "s3cret", Duration.ofSeconds(5));
        Transport.Response first = transport.send(shipment("POST", "/v1/samples", "a"));
        Transport.Response second = transport.send(shipment("PUT", "/v1/runs/r1", "b"));

        assertThat(first).isEqualTo(new Transport.Response(200, "{\"ok\":true}"));
        assertThat(second.status()).isEqualTo(200);
        assertThat(received).containsExactly("POST /v1/samples gzip Bearer s3cret \"a\"",
                "PUT /v1/runs/r1 gzip Bearer s3cret \"b\"");
        assertThat(clientPorts).as("one kept-alive connection").hasSize(1);
    }

    /** Every request says when it left, on the agent's clock (a replayed batch was made long before). */
    @Test
    void everyRequestCarriesItsSendTimeOnTheAgentsClock() throws Exception {
        List<String> sentAt = new CopyOnWriteArrayList<>();
        server.createContext("/v1/time", exchange -> {
            exchange.getRequestBody().readAllBytes();
            sentAt.add(exchange.getRequestHeaders().getFirst("Trainwatch-Sent-At"));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        java.time.Clock clock = java.time.Clock.fixed(java.time.Instant.ofEpochMilli(1_767_225_599_021L),
                java.time.ZoneOffset.UTC);
        HttpTransport transport = new HttpTransport(uri(), null, Duration.ofSeconds(5), clock, null);
        transport.send(shipment("POST", "/v1/time", "a"));
        transport.send(shipment("POST", "/v1/time", "b"));
        assertThat(sentAt).containsExactly("1767225599.021", "1767225599.021");
        assertThat(HttpTransport.seconds(1_767_225_599_005L)).isEqualTo("1767225599.005");
        assertThat(HttpTransport.seconds(1_767_225_599_050L)).isEqualTo("1767225599.050");
        assertThat(HttpTransport.seconds(1_767_225_599_000L)).isEqualTo("1767225599.000");
    }

    /** A refusal is an answer, not a failure: its status and the start of its body, on one line, for the log. */
    @Test
    void aRefusalGivesItsStatusAndBody() throws Exception {
        status = 422;
        answer = "{\"error\":\n  \"gpus[0].memory_used_bytes out of range\"}";
        HttpTransport transport = new HttpTransport(uri(), null, Duration.ofSeconds(5));
        Transport.Response response = transport.send(shipment("POST", "/v1/samples", "x"));
        assertThat(response).isEqualTo(
                new Transport.Response(422, "{\"error\": \"gpus[0].memory_used_bytes out of range\"}"));
        assertThat(received).containsExactly("POST /v1/samples gzip null \"x\"");
        // The connection stays usable after a refusal.
        status = 200;
        assertThat(transport.send(shipment("POST", "/v1/samples", "y")).status()).isEqualTo(200);
    }

    @Test
    void nobodyListeningIsAnIoException() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        HttpTransport transport = new HttpTransport(URI.create("http://127.0.0.1:" + port), null,
                Duration.ofSeconds(2));
        assertThatThrownBy(() -> transport.send(shipment("POST", "/v1/samples", "z")))
                .isInstanceOf(IOException.class);
    }
}
