package dev.trainwatch.agent.export;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.exposition.HostSeries;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;

/**
 * The node's own Prometheus target ({@code trainwatch agent --listen HOST:PORT}): {@code GET /metrics} serves the
 * node's per-GPU and host series under the collector's names ({@link GpuSeries}, {@link HostSeries}), so a large
 * fleet is scraped per node; {@code GET /healthz} answers {@code ok}. One daemon thread serves requests.
 */
public final class NodeExporter implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(NodeExporter.class.getName());

    private static final String NODELAY = "sun.net.httpserver.nodelay";

    private final HttpServer server;
    private final ExecutorService executor;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    private NodeExporter(HttpServer server, ExecutorService executor, NodeReadings readings) {
        this.server = server;
        this.executor = executor;
        registry.register(new GpuSeries(readings::gpus));
        registry.register(new HostSeries(readings::hosts));
    }

    /** Listens on {@code address}; {@code tls} (from {@code --web-config}) null for plain HTTP. */
    public static NodeExporter start(InetSocketAddress address, NodeReadings readings, SSLContext tls)
            throws IOException {
        // Headers and body go apart: without TCP_NODELAY each scrape waits out the delayed ACK (~40 ms). Set before
        // the server's configuration is first loaded.
        if (System.getProperty(NODELAY) == null) {
            System.setProperty(NODELAY, "true");
        }
        HttpServer server;
        if (tls != null) {
            HttpsServer https = HttpsServer.create(address, 16);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            server = https;
        } else {
            server = HttpServer.create(address, 16);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "trainwatch-exporter");
            t.setDaemon(true);
            return t;
        });
        readings.serve();
        NodeExporter exporter = new NodeExporter(server, executor, readings);
        server.createContext("/metrics", exporter::metrics);
        server.createContext("/healthz", exchange -> respond(exchange, 200, "ok\n"));
        server.setExecutor(executor);
        server.start();
        return exporter;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public byte[] scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        writer.write(out, registry.scrape());
        return out.toByteArray();
    }

    private void metrics(HttpExchange exchange) throws IOException {
        if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
            respond(exchange, 405, "GET /metrics\n");
            return;
        }
        byte[] body;
        try {
            body = scrape();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "scrape failed: " + e);
            respond(exchange, 500, "scrape failed; see the agent's log\n");
            return;
        }
        respond(exchange, 200, writer.getContentType(), body);
    }

    private static void respond(HttpExchange exchange, int status, String text) throws IOException {
        respond(exchange, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    private static void respond(HttpExchange exchange, int status, String contentType, byte[] body)
            throws IOException {
        try (exchange) {
            exchange.getResponseHeaders().set("Content-Type", contentType);
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(status, head ? -1 : body.length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
