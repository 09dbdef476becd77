package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.support.RunningCollector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@code /metrics} answers OpenMetrics text when the scraper asks for it, the Prometheus text format otherwise; gzip
 * when the scraper accepts it (Prometheus does), plain otherwise.
 */
class OpenMetricsNegotiationTest {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void prometheusAcceptHeaderGetsOpenMetrics() throws Exception {
        try (RunningCollector c = RunningCollector.start()) {
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

    @Test
    void aScraperThatAcceptsGzipGetsTheSameTextCompressed() throws Exception {
        try (RunningCollector c = RunningCollector.start()) {
            String plain = c.get("/metrics").body();
            // What Prometheus sends: Accept-Encoding: gzip, and it decompresses itself.
            HttpResponse<byte[]> zipped = http.send(HttpRequest.newBuilder(c.uri("/metrics"))
                    .header("Accept-Encoding", "gzip").build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(zipped.statusCode()).isEqualTo(200);
            assertThat(zipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
            String unzipped;
            try (java.util.zip.GZIPInputStream in = new java.util.zip.GZIPInputStream(
                    new java.io.ByteArrayInputStream(zipped.body()))) {
                unzipped = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
            assertThat(withoutVaryingLines(unzipped)).isEqualTo(withoutVaryingLines(plain));
            assertThat(unzipped).contains("# TYPE trainwatch_ingest_requests_total counter");

            // gzip refused by its q-value, or another coding only: the text as is, without a Content-Encoding header
            // (RFC 9110 reserves "identity" for Accept-Encoding, so it must not be sent as a content coding).
            for (String refused : new String[] {"gzip;q=0", "deflate", "br, gzip; q=0.0"}) {
                HttpResponse<String> text = http.send(HttpRequest.newBuilder(c.uri("/metrics"))
                        .header("Accept-Encoding", refused).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(text.headers().firstValue("Content-Encoding")).as(refused).isEmpty();
                assertThat(text.body()).as(refused).contains("# TYPE trainwatch_ingest_requests_total counter");
            }
        }
    }

    /** The text without the collector's own gauges that move between two scrapes (its JVM, its request counts). */
    private static String withoutVaryingLines(String exposition) {
        return exposition.lines().filter(line -> !line.contains("jvm_") && !line.contains("process_")
                && !line.contains("system_") && !line.contains("ingest_requests")
                && !line.contains("scrape")).collect(java.util.stream.Collectors.joining("\n"));
    }
}
