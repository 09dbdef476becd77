package dev.trainwatch.collector.alerting;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;

/**
 * Posts a value as JSON with a deadline; every failure is a one-line {@link DeliveryException}. The
 * {@value #IDEMPOTENCY_KEY} header digests the body, so a receiver can tell a retry from a new alert.
 */
final class HttpJsonPoster {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    private final HttpClient client;
    private final Duration deadline;

    /** {@code deadline}: longer than the slowest receiver answers, or a slow one gets repeats. */
    HttpJsonPoster(Duration deadline) {
        this.client = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT).build();
        this.deadline = deadline;
    }

    static String idempotencyKey(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body), 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    void post(URI uri, Object value) throws DeliveryException {
        byte[] body;
        try {
            body = Json.MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new DeliveryException("cannot encode alerts: " + e.getOriginalMessage(), false);
        }
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(deadline)
                .header("Content-Type", "application/json")
                .header("User-Agent", "trainwatch")
                .header(IDEMPOTENCY_KEY, idempotencyKey(body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        HttpResponse<String> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new DeliveryException(uri + " unreachable: " + Errors.oneLine(e), true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeliveryException(uri + ": interrupted", true);
        }
        int status = response.statusCode();
        if (status / 100 == 2) {
            return;
        }
        String answer = response.body() == null ? "" : response.body().strip();
        if (answer.length() > 200) {
            answer = answer.substring(0, 200) + "…";
        }
        boolean retryable = status >= 500 || status == 408 || status == 429;
        throw new DeliveryException(uri + " answered " + status + (answer.isEmpty() ? "" : ": " + answer.lines()
                .findFirst().orElse("")), retryable);
    }
}
