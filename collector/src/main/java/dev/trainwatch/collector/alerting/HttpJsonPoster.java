package dev.trainwatch.collector.alerting;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Posts JSON with a timeout and turns every failure into a one-line {@link DeliveryException}. */
final class HttpJsonPoster {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private final HttpClient client;

    HttpJsonPoster() {
        this.client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    }

    void post(URI uri, byte[] body) throws DeliveryException {
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .header("User-Agent", "trainwatch")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        HttpResponse<String> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new DeliveryException(uri + " unreachable: " + describe(e), true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeliveryException(uri + ": interrupted", true);
        }
        int status = response.statusCode();
        if (status / 100 == 2) {
            return;
        }
        String body1 = response.body() == null ? "" : response.body().strip();
        if (body1.length() > 200) {
            body1 = body1.substring(0, 200) + "…";
        }
        boolean retryable = status >= 500 || status == 408 || status == 429;
        throw new DeliveryException(uri + " answered " + status + (body1.isEmpty() ? "" : ": " + body1.lines()
                .findFirst().orElse("")), retryable);
    }

    private static String describe(IOException e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message.lines().findFirst()
                .orElse(message);
    }
}
