package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;

class GzipJsonTest {

    private static Object gunzipJson(byte[] gzip) throws IOException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gzip))) {
            return Json.MAPPER.readValue(in.readAllBytes(), Object.class);
        }
    }

    /** Small, large and small again, each a valid gzip member of its value. */
    @Test
    void eachValueIsValidGzipJson() throws IOException {
        Map<String, Object> small = Map.of("host", "node-1", "seq", 7);
        List<String> large = new ArrayList<>();
        for (int i = 0; i < 60_000; i++) {
            large.add("line " + i + " " + Integer.toHexString(i * 2654435761L > 0 ? i * 31 : i));
        }
        assertThat(gunzipJson(Payload.gzipJson(small))).isEqualTo(small);
        assertThat(gunzipJson(Payload.gzipJson(large))).isEqualTo(large);
        assertThat(gunzipJson(Payload.gzipJson(small))).isEqualTo(small);
        assertThat(gunzipJson(Payload.gzipJson(List.of()))).isEqualTo(List.of());
    }

    /** The same bytes as the JDK's own gzip would decompress to, for a batch-like record. */
    @Test
    void payloadsDecodeWithTheJdksGzip() throws IOException {
        Payload p = Payload.steps("run-1", List.of(), null);
        assertThat(gunzipJson(p.gzipBody())).isEqualTo(List.of());
        assertThat(p.path()).isEqualTo("/v1/runs/run-1/steps");
    }
}
