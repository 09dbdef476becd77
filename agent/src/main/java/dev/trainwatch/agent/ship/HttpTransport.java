package dev.trainwatch.agent.ship;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * Sends shipments with the JDK's HTTP client: gzip JSON, bearer token when one is configured. The token is asked
 * for on every request, so a token file fixed by the operator is picked up without a restart. Thread-safe.
 */
public final class HttpTransport implements Transport {

    private static final int MAX_BODY_IN_LOG = 200;

    private final HttpClient client;
    private final String baseUrl;
    private final Supplier<String> token;
    private final Duration requestTimeout;

    /**
     * @param collectorUrl   base URL, e.g. {@code http://10.0.0.5:9477}
     * @param token          bearer token supplier; null or a supplier of null for none
     * @param requestTimeout longest wait for one answer
     */
    public HttpTransport(URI collectorUrl, Supplier<String> token, Duration requestTimeout) {
        String base = collectorUrl.toString();
        this.baseUrl = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.token = token != null ? token : () -> null;
        this.requestTimeout = requestTimeout;
        // HTTP/1.1 with keep-alive: one connection to the collector, reused; no h2c upgrade headers on every
        // request to a plain-http collector.
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(requestTimeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                // One request at a time: one daemon thread for the client's dependent tasks instead of a cached
                // pool whose idle threads die and are re-created every minute.
                .executor(Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "trainwatch-http");
                    thread.setDaemon(true);
                    return thread;
                }))
                .build();
    }

    @Override
    public Response send(Shipment shipment) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + shipment.path()))
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .header("Content-Encoding", "gzip")
                .method(shipment.method(), HttpRequest.BodyPublishers.ofByteArray(shipment.gzipBody()));
        String bearer = token.get();
        if (bearer != null && !bearer.isEmpty()) {
            request.header("Authorization", "Bearer " + bearer);
        }
        HttpResponse<byte[]> response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        byte[] body = response.body();
        String text = new String(body, 0, Math.min(body.length, MAX_BODY_IN_LOG), StandardCharsets.UTF_8);
        return new Response(response.statusCode(), text.replaceAll("\\s+", " ").strip());
    }
}
