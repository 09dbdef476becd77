package dev.trainwatch.collector.support;

import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;

/**
 * The real collector on an ephemeral loopback port over a {@link FakePredictor} and a {@link SettableClock}, with a small
 * blocking HTTP client. Close it after use. (The agent's tests talk to a fake instead: protocol's
 * {@code testing.RunningCollector}.)
 */
public final class RunningCollector implements AutoCloseable {
    public final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    public final CollectorServer server;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public RunningCollector(CollectorConfig config) {
        this(config, FleetSettings.defaults());
    }

    /** With these fleet limits and windows (e.g. tiny limits to fill them over HTTP). */
    public RunningCollector(CollectorConfig config, FleetSettings settings) {
        CollectorConfig withClock = config.withClock(clock);
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, settings, DetectorSettings.defaults());
        this.server = CollectorServer.builder(withClock).fleet(fleet).start();
    }

    /** Loopback, port 0, no token, default limits. */
    public static RunningCollector start() {
        return new RunningCollector(CollectorConfig.defaults().withListen("127.0.0.1", 0));
    }

    public URI uri(String path) {
        return URI.create(server.uri() + path);
    }

    public HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(uri(path)).GET());
    }

    public HttpResponse<String> send(String method, String path, String contentType, byte[] body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return send(request);
    }

    public HttpResponse<String> postJson(String path, byte[] body, String... headers) {
        return send("POST", path, "application/json", body, headers);
    }

    public HttpResponse<String> putJson(String path, byte[] body, String... headers) {
        return send("PUT", path, "application/json", body, headers);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        try {
            return client.send(request.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
