package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The plain HTTP/1.1 client against a server that answers in every way HTTP/1.1 allows. */
class PlainHttpTest {

    /** A scripted answer: the bytes to send, and whether to close the connection after them. */
    record Answer(String raw, boolean close) {
    }

    private ServerSocket server;
    private final LinkedBlockingQueue<Answer> answers = new LinkedBlockingQueue<>();
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();

    @BeforeEach
    void start() throws IOException {
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    connections.incrementAndGet();
                    InputStream in = new BufferedInputStream(s.getInputStream());
                    OutputStream out = s.getOutputStream();
                    while (true) {
                        String head = readHead(in);
                        if (head == null) {
                            break;
                        }
                        int length = 0;
                        for (String h : head.split("\r\n")) {
                            if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                                length = Integer.parseInt(h.substring(15).strip());
                            }
                        }
                        in.readNBytes(length);
                        requests.add(head.lines().findFirst().orElse("") + " | " + head.contains("Host: 127.0.0.1:")
                                + " | " + head.contains("Authorization: Bearer t0k"));
                        Answer a = answers.take();
                        out.write(a.raw().getBytes(StandardCharsets.UTF_8));
                        out.flush();
                        if (a.close()) {
                            break;
                        }
                    }
                } catch (IOException | InterruptedException e) {
                    // next connection
                }
            }
        });
        t.setDaemon(true);
        t.start();
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            b.write(c);
            String s = b.toString(StandardCharsets.ISO_8859_1);
            if (s.endsWith("\r\n\r\n")) {
                return s;
            }
        }
        return null;
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
    }

    private HttpTransport transport() {
        return new HttpTransport(URI.create("http://127.0.0.1:" + server.getLocalPort() + "/"), () -> "t0k",
                Duration.ofSeconds(5));
    }

    private static Shipment shipment(String path) {
        return new Shipment(1, "POST", path, new GzipJson().encode("x"), "test");
    }

    @Test
    void lengthChunkedAndToTheEndAnswers() throws Exception {
        HttpTransport t = transport();
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}", false));
        answers.add(new Answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "4\r\n{\"a\"\r\n3;x=y\r\n:1}\r\n0\r\nTrailer: z\r\n\r\n", false));
        answers.add(new Answer("HTTP/1.1 204 No Content\r\n\r\n", false));
        answers.add(new Answer("HTTP/1.0 422 Unprocessable\r\nContent-Type: text/plain\r\n\r\nbad\n  batch\n", true));
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", true));
        answers.add(new Answer("HTTP/1.1 503 Busy\r\nContent-Length: 1300\r\n\r\n" + "y".repeat(1300), false));

        assertThat(t.send(shipment("/v1/samples"))).isEqualTo(new Transport.Response(200, "{\"ok\":true}"));
        assertThat(t.send(shipment("/v1/runs/r%201/steps?agent_id=a-1")))
                .isEqualTo(new Transport.Response(201, "{\"a\":1}"));
        assertThat(t.send(shipment("/v1/samples"))).isEqualTo(new Transport.Response(204, ""));
        assertThat(t.send(shipment("/v1/samples"))).isEqualTo(new Transport.Response(422, "bad batch"));
        assertThat(t.send(shipment("/v1/samples"))).isEqualTo(new Transport.Response(200, ""));
        assertThat(t.send(shipment("/v1/samples"))).isEqualTo(new Transport.Response(503, "y".repeat(1024)));
        assertThat(requests).containsExactly("POST /v1/samples HTTP/1.1 | true | true",
                "POST /v1/runs/r%201/steps?agent_id=a-1 HTTP/1.1 | true | true",
                "POST /v1/samples HTTP/1.1 | true | true", "POST /v1/samples HTTP/1.1 | true | true",
                "POST /v1/samples HTTP/1.1 | true | true", "POST /v1/samples HTTP/1.1 | true | true");
        assertThat(connections).as("a new connection after each answer that closed one").hasValue(3);
    }

    @Test
    void aConnectionTheCollectorClosedIsNotReused() throws Exception {
        HttpTransport t = transport();
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true)); // closes without saying so
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false));
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
        // Idle past the check: the 1-ms read finds the connection's end before anything is written.
        Thread.sleep(PlainHttp.CHECK_AFTER_IDLE_MS + 100);
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
        assertThat(connections).hasValue(2);
        assertThat(requests).hasSize(2);
    }

    @Test
    void aRecentlyUsedConnectionThatIsGoneIsReplacedWithoutLosingTheRequest() throws Exception {
        HttpTransport t = transport();
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true)); // closes without saying so
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false));
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
        // At once, within the idle time no check is made after: the request goes out on the dead connection, finds
        // no answer there, and is sent once more on a new one — where the collector gets it, once.
        assertThat(t.send(shipment("/v1/samples"))).isEqualTo(new Transport.Response(200, "ok"));
        assertThat(connections).hasValue(2);
        assertThat(requests).hasSize(2);
    }

    @Test
    void aReusedConnectionHungUpWithoutAnAnswerIsTriedOnceMoreOnly() throws Exception {
        HttpTransport t = transport();
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false));
        answers.add(new Answer("", true)); // read the request on the kept connection, hung up without a word
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false));
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
        assertThat(requests).as("the second request was read twice: the collector keeps one (agent id, seq)")
                .hasSize(3);
        assertThat(connections).hasValue(2);

        // On a new connection, or a second time in a row: the failure is the caller's (spool, back off).
        answers.add(new Answer("", true));
        answers.add(new Answer("", true));
        assertThatThrownBy(() -> t.send(shipment("/v1/samples"))).isInstanceOf(java.io.EOFException.class)
                .hasMessageContaining("closed the connection without an answer");
        assertThat(requests).hasSize(5);
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false));
        answers.add(new Answer("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 10\r\n\r\nabc", true)); // begun, cut short
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
        assertThatThrownBy(() -> t.send(shipment("/v1/samples"))).isInstanceOf(IOException.class);
        assertThat(requests).as("an answer begun is never sent again").hasSize(7);
    }

    @Test
    void garbageAndCutAnswersAreIoExceptions() throws Exception {
        HttpTransport t = transport();
        answers.add(new Answer("SSH-2.0-OpenSSH\r\n\r\n", true));
        assertThatThrownBy(() -> t.send(shipment("/v1/samples"))).isInstanceOf(IOException.class)
                .hasMessageContaining("not an HTTP answer");
        answers.add(new Answer("", true)); // read the request, hung up without a word
        assertThatThrownBy(() -> t.send(shipment("/v1/samples"))).isInstanceOf(java.io.EOFException.class)
                .hasMessageContaining("closed the connection without an answer");
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true));
        assertThatThrownBy(() -> t.send(shipment("/v1/samples"))).isInstanceOf(IOException.class);
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false));
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
    }

    @Test
    void aSilentCollectorTimesOut() throws Exception {
        HttpTransport t = new HttpTransport(URI.create("http://127.0.0.1:" + server.getLocalPort()), null,
                Duration.ofMillis(300));
        assertThatThrownBy(() -> t.send(shipment("/v1/samples"))).isInstanceOf(java.net.SocketTimeoutException.class);
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false)); // late answer to the first
        answers.add(new Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false));
        assertThat(t.send(shipment("/v1/samples")).status()).isEqualTo(200);
    }

    @Test
    void httpsProxiesAndOddUrlsStayWithHttpUrlConnection() {
        assertThat(HttpTransport.plainHttpFor(URI.create("http://10.0.0.5:9477"))).isTrue();
        assertThat(HttpTransport.plainHttpFor(URI.create("HTTP://collector/prefix/"))).isTrue();
        assertThat(HttpTransport.plainHttpFor(URI.create("https://10.0.0.5:9477"))).isFalse();
        assertThat(HttpTransport.plainHttpFor(URI.create("http://u:p@10.0.0.5:9477"))).isFalse();
        assertThat(HttpTransport.plainHttpFor(URI.create("http://10.0.0.5:9477/?x=1"))).isFalse();
        System.setProperty("http.proxyHost", "proxy");
        try {
            assertThat(HttpTransport.plainHttpFor(URI.create("http://10.0.0.5:9477"))).isFalse();
        } finally {
            System.clearProperty("http.proxyHost");
        }
    }
}
