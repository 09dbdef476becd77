package dev.trainwatch.cli.demo;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Sends the demo's data to a collector over HTTP, through the same endpoints and codec real agents and training
 * scripts use, so the demo exercises the real ingest path. Thread-safe (the JDK client is).
 */
final class HttpDemoSink implements DemoSink {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI base;
    private final String token;

    /** {@code base} ends in {@code /} (a collector's clientUri); {@code token}: null when the collector wants none. */
    HttpDemoSink(URI base, String token) {
        this.base = base;
        this.token = token;
    }

    @Override
    public void putSpec(String runId, RunSpec spec) throws IOException {
        send(HttpRequest.newBuilder(runUri(runId, "")).PUT(body(spec)));
    }

    @Override
    public void postSteps(String runId, List<StepEvent> steps) throws IOException {
        send(HttpRequest.newBuilder(runUri(runId, "/steps")).POST(body(steps)));
    }

    @Override
    public void postBatch(AgentBatch batch) throws IOException {
        send(HttpRequest.newBuilder(base.resolve("v1/samples")).POST(body(batch)));
    }

    private URI runUri(String runId, String suffix) {
        return base.resolve("v1/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8) + suffix);
    }

    private static HttpRequest.BodyPublisher body(Object value) throws IOException {
        return HttpRequest.BodyPublishers.ofByteArray(Json.MAPPER.writeValueAsBytes(value));
    }

    private void send(HttpRequest.Builder request) throws IOException {
        request.timeout(TIMEOUT).header("Content-Type", "application/json");
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpRequest built = request.build();
        try {
            HttpResponse<String> response = client.send(built, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() / 100 != 2) {
                throw new IOException(built.method() + " " + built.uri().getPath() + " answered "
                        + response.statusCode() + ": " + response.body().strip());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while sending to the collector", e);
        }
    }
}
