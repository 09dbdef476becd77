package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpoolTest {

    @TempDir
    Path dir;

    static Shipment shipment(long ordinal, int bytes) {
        return new Shipment(ordinal, "POST", "/v1/samples", body(ordinal, bytes), "#" + ordinal);
    }

    /**
     * A valid body (a gzip stream of one JSON string) of exactly {@code bytes} bytes (at least 30), stored without
     * compression so its size follows the padding.
     */
    static byte[] body(long id, int bytes) {
        for (int pad = 0; pad < bytes; pad++) {
            byte[] gz = storedGzip("\"" + id + "-" + "x".repeat(pad) + "\"");
            if (gz.length == bytes) {
                return gz;
            }
            if (gz.length > bytes) {
                break;
            }
        }
        throw new IllegalArgumentException("no body of " + bytes + " bytes");
    }

    /** The id a body from {@link #body} carries. */
    static int idOf(Shipment shipment) {
        try (java.io.InputStream in = new java.util.zip.GZIPInputStream(
                new java.io.ByteArrayInputStream(shipment.gzipBody()))) {
            String text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            return Integer.parseInt(text.substring(1, text.indexOf('-')));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static byte[] storedGzip(String json) {
        try {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            try (java.util.zip.GZIPOutputStream gz = new java.util.zip.GZIPOutputStream(out) {
                {
                    def.setLevel(java.util.zip.Deflater.NO_COMPRESSION);
                }
            }) {
                gz.write(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            return out.toByteArray();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static List<Long> drain(Spool spool) {
        List<Long> ordinals = new ArrayList<>();
        Shipment s;
        while ((s = spool.oldest()) != null) {
            ordinals.add(s.ordinal());
            spool.remove(s.ordinal());
        }
        return ordinals;
    }

    @Test
    void replaysInOrdinalOrderWhateverTheAppendOrder() throws Exception {
        Spool spool = new Spool(dir, 1 << 20);
        spool.append(shipment(3, 40));
        spool.append(shipment(1, 40));
        spool.append(shipment(2, 40));
        assertThat(spool.depth()).isEqualTo(3);
        assertThat(spool.bytes()).isEqualTo(120);
        assertThat(drain(spool)).containsExactly(1L, 2L, 3L);
        assertThat(spool.isEmpty()).isTrue();
        assertThat(spool.bytes()).isZero();
    }

    @Test
    void survivesARestartWithBodiesAndPathsIntact() throws Exception {
        Spool spool = new Spool(dir, 1 << 20);
        byte[] spec = body(7, 40);
        spool.append(new Shipment(7, "PUT", "/v1/runs/a%2Fb c", spec, "spec"));
        spool.append(shipment(8, 40));
        Files.write(dir.resolve(".tmp-00000000000000000009-POST-x.json.gz"), new byte[] {9});
        Files.writeString(dir.resolve("agent-id"), "someone-else's file\n");

        Spool reopened = new Spool(dir, 1 << 20);
        assertThat(reopened.depth()).isEqualTo(2);
        assertThat(reopened.maxOrdinal()).isEqualTo(8);
        Shipment first = reopened.oldest();
        assertThat(first.ordinal()).isEqualTo(7);
        assertThat(first.method()).isEqualTo("PUT");
        assertThat(first.path()).isEqualTo("/v1/runs/a%2Fb c");
        assertThat(first.gzipBody()).containsExactly(spec);
        assertThat(dir.resolve(".tmp-00000000000000000009-POST-x.json.gz")).doesNotExist();
        assertThat(dir.resolve("agent-id")).exists();
    }

    @Test
    void whenFullTheOldestAreDroppedAndCounted() throws Exception {
        Spool spool = new Spool(dir, 1000);
        for (long i = 0; i < 25; i++) {
            spool.append(shipment(i, 100));
        }
        assertThat(spool.bytes()).isLessThanOrEqualTo(1000);
        assertThat(spool.droppedBatches()).isEqualTo(15);
        assertThat(drain(spool)).containsExactly(15L, 16L, 17L, 18L, 19L, 20L, 21L, 22L, 23L, 24L);
        try (var files = Files.list(dir)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void aShipmentBiggerThanTheWholeSpoolIsDroppedNotWritten() throws Exception {
        Spool spool = new Spool(dir, 100);
        spool.append(shipment(1, 60));
        spool.append(shipment(2, 500));
        assertThat(spool.droppedBatches()).isEqualTo(2);
        assertThat(spool.depth()).isZero();
    }

    @Test
    void anOlderShipmentComingBackDoesNotEvictNewerOnes() throws Exception {
        Spool spool = new Spool(dir, 250);
        spool.append(shipment(5, 100));
        spool.append(shipment(6, 100));
        spool.append(shipment(4, 100));
        assertThat(drain(spool)).containsExactly(5L, 6L);
        assertThat(spool.droppedBatches()).isEqualTo(1);
    }
}
