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
        byte[] body = new byte[bytes];
        body[0] = (byte) ordinal;
        return new Shipment(ordinal, "POST", "/v1/samples", body, "#" + ordinal);
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
        spool.append(shipment(3, 10));
        spool.append(shipment(1, 10));
        spool.append(shipment(2, 10));
        assertThat(spool.depth()).isEqualTo(3);
        assertThat(spool.bytes()).isEqualTo(30);
        assertThat(drain(spool)).containsExactly(1L, 2L, 3L);
        assertThat(spool.isEmpty()).isTrue();
        assertThat(spool.bytes()).isZero();
    }

    @Test
    void survivesARestartWithBodiesAndPathsIntact() throws Exception {
        Spool spool = new Spool(dir, 1 << 20);
        spool.append(new Shipment(7, "PUT", "/v1/runs/a%2Fb c", new byte[] {1, 2, 3}, "spec"));
        spool.append(shipment(8, 5));
        Files.write(dir.resolve(".tmp-00000000000000000009-POST-x.json.gz"), new byte[] {9});
        Files.writeString(dir.resolve("agent-id"), "someone-else's file\n");

        Spool reopened = new Spool(dir, 1 << 20);
        assertThat(reopened.depth()).isEqualTo(2);
        assertThat(reopened.maxOrdinal()).isEqualTo(8);
        Shipment first = reopened.oldest();
        assertThat(first.ordinal()).isEqualTo(7);
        assertThat(first.method()).isEqualTo("PUT");
        assertThat(first.path()).isEqualTo("/v1/runs/a%2Fb c");
        assertThat(first.gzipBody()).containsExactly(1, 2, 3);
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
        spool.append(shipment(1, 50));
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
