package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.support.TestCollector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** {@code /metrics} answers OpenMetrics text when the scraper asks for it, the Prometheus text format otherwise. */
class OpenMetricsNegotiationTest {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void prometheusAcceptHeaderGetsOpenMetrics() throws Exception {
        try (TestCollector c = TestCollector.start()) {
            // What Prometheus 2.x sends by default.
            HttpResponse<String> om = http.send(HttpRequest.newBuilder(c.uri("/metrics")).header("Accept",
                    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                            + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(om.statusCode()).isEqualTo(200);
            assertThat(om.headers().firstValue("Content-Type")).hasValueSatisfying(
                    t -> assertThat(t).startsWith("application/openmetrics-text"));
            assertThat(om.body().strip()).endsWith("# EOF");
            assertThat(om.body()).contains("# TYPE trainwatch_ingest_requests counter");

            HttpResponse<String> text = c.get("/metrics");
            assertThat(text.headers().firstValue("Content-Type")).hasValueSatisfying(
                    t -> assertThat(t).startsWith("text/plain; version=0.0.4"));
            assertThat(text.body()).doesNotContain("# EOF");
            assertThat(text.body()).contains("# TYPE trainwatch_ingest_requests_total counter");
        }
    }
}
