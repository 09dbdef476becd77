package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.wire.Gzip;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ScrapeEncodingTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
        "gzip|true", "GZIP|true", "x-gzip|true", "deflate, gzip|true", "gzip;q=0.5|true", "gzip; q=1.0|true",
        "*|true", "br, *;q=0.1|true",
        "NULL|false", "''|false", "identity|false", "deflate|false", "br|false", "gzip;q=0|false",
        "gzip; q=0.000|false", "*;q=0|false", "gzip;q=0, *|false", "gzipx|false"})
    void acceptsGzipOnlyWhenTheHeaderDoes(String header, boolean expected) {
        assertThat(ScrapeEncoding.acceptsGzip(header)).as(String.valueOf(header)).isEqualTo(expected);
    }

    @Test
    void gzipRoundTrips() throws IOException {
        byte[] text = "trainwatch_gpu_utilization_ratio{gpu=\"0\"} 0.5\n".repeat(10_000)
                .getBytes(StandardCharsets.UTF_8);
        byte[] zipped = Gzip.fastest(text);
        assertThat(zipped.length).isLessThan(text.length / 20);
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(zipped))) {
            assertThat(in.readAllBytes()).isEqualTo(text);
        }
    }
}
