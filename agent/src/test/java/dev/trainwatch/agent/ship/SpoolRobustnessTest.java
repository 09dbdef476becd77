package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool that holds what no agent wrote, or that cannot be written: delivery goes on. Before, one unreadable entry
 * ended the delivery thread for good ("spool unreadable, giving up on it"), a 200 MB one ran the heap out, and a
 * directory that could not be written cost one ERROR line per shipment (or, at start, the agent itself).
 */
@org.junit.jupiter.api.parallel.Isolated // watches process-wide log handlers
class SpoolRobustnessTest {

    @TempDir
    Path dir;

    private final List<Integer> delivered = new CopyOnWriteArrayList<>();
    private final Transport collector = shipment -> {
        delivered.add(SpoolTest.idOf(shipment));
        return new Transport.Response(200, "");
    };
    private final Backoff backoff = new Backoff(Duration.ofMillis(1), Duration.ofMillis(5), () -> 0.5);
    private final Sleeper fast = d -> Thread.sleep(Math.min(d.toMillis(), 5));

    private static String name(long ordinal) {
        return String.format("%020d-POST-%%2Fv1%%2Fsamples.json.gz", ordinal);
    }

    @Test
    void entriesThatCannotBeReplayedAreMovedAsideAndTheRestIsDelivered() throws Exception {
        Path spool = dir.resolve("spool");
        Files.createDirectories(spool);
        Files.write(spool.resolve(name(1)), SpoolTest.body(1, 40));
        Files.createDirectory(spool.resolve(name(2)));                       // a directory named like an entry
        Files.write(spool.resolve(name(3)), new byte[] {0x1f, (byte) 0x8b, 8, 0, 1, 2}); // a cut-off gzip
        Files.write(spool.resolve(name(4)), SpoolTest.storedGzip("{\"host\": "));      // gzip of broken JSON
        try (RandomAccessFile big = new RandomAccessFile(spool.resolve(name(5)).toFile(), "rw")) {
            big.setLength(200L << 20);                                        // 200 MB (sparse)
        }
        Files.write(spool.resolve(name(6)), SpoolTest.body(6, 40));

        Spool opened = new Spool(spool, 1L << 30);
        Shipper shipper = new Shipper(collector, opened, backoff, fast);
        shipper.start();
        try {
            await().atMost(20, TimeUnit.SECONDS).until(() -> shipper.pending() == 0);
            assertThat(delivered).containsExactly(1, 6);
            assertThat(shipper.alive()).isTrue();
            assertThat(shipper.rejectedSpoolEntries()).isEqualTo(4);
            try (var aside = Files.list(spool.resolve(Spool.REJECTED_DIR))) {
                assertThat(aside.map(p -> p.getFileName().toString()))
                        .containsExactlyInAnyOrder(name(2), name(3), name(4), name(5));
            }
            // New shipments still flow.
            shipper.submit(new Payload("POST", "/v1/samples", SpoolTest.body(7, 40), "#7", false));
            await().atMost(20, TimeUnit.SECONDS).until(() -> delivered.contains(7));
        } finally {
            shipper.close(Duration.ofSeconds(1));
        }
        // A restart does not meet them again.
        assertThat(new Spool(spool, 1L << 30).depth()).isZero();
    }

    @Test
    void theDeliveryThreadSurvivesWhateverTheTransportThrows() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Transport flaky = shipment -> {
            int n = calls.incrementAndGet();
            if (n == 1) {
                throw new IllegalStateException("the HTTP client broke");
            }
            if (n == 2) {
                throw new OutOfMemoryError("Java heap space");
            }
            return collector.send(shipment);
        };
        Shipper shipper = new Shipper(flaky, new Spool(dir.resolve("spool"), 1 << 20), backoff, fast);
        shipper.start();
        try {
            shipper.submit(new Payload("POST", "/v1/samples", SpoolTest.body(1, 40), "#1", false));
            shipper.submit(new Payload("POST", "/v1/samples", SpoolTest.body(2, 40), "#2", false));
            await().atMost(20, TimeUnit.SECONDS).until(() -> delivered.size() == 2);
            assertThat(delivered).containsExactly(1, 2);
            assertThat(shipper.alive()).isTrue();
            assertThat(shipper.deliveryErrors()).isEqualTo(1); // the OOM; the runtime exception is a failed send
        } finally {
            shipper.close(Duration.ofSeconds(1));
        }
    }

    @Test
    void aSpoolDirectoryThatCannotBeCreatedKeepsShipmentsInMemory() throws Exception {
        Path notADirectory = dir.resolve("file");
        Files.writeString(notADirectory, "x");
        Spool spool = new Spool(notADirectory.resolve("spool"), 1 << 20); // before: IOException, agent exit 1
        assertThat(spool.inMemory()).isTrue();
        assertThat(spool.memoryReason()).isEqualTo("Not a directory");
        Shipment one = SpoolTest.shipment(1, 40);
        assertThat(spool.append(one)).isFalse();
        assertThat(spool.depth()).isEqualTo(1);
        assertThat(spool.oldest()).isSameAs(one);
    }

    @Test
    void aSpoolThatStopsBeingWritableDegradesToMemoryAndCollectorOutagesStillLoseNothing() throws Exception {
        Path spoolDir = dir.resolve("spool");
        Spool spool = new Spool(spoolDir, 1 << 20);
        AtomicInteger down = new AtomicInteger(1);
        Transport maybeDown = shipment -> {
            if (down.get() == 1) {
                throw new java.net.ConnectException("Connection refused");
            }
            return collector.send(shipment);
        };
        Shipper shipper = new Shipper(maybeDown, spool, backoff, fast);
        List<String> lines = new CopyOnWriteArrayList<>();
        java.util.logging.Logger spoolLog = java.util.logging.Logger.getLogger(Spool.class.getName());
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                lines.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        spoolLog.addHandler(capture);
        shipper.start();
        try {
            shipper.submit(new Payload("POST", "/v1/samples", SpoolTest.body(1, 40), "#1", false));
            await().atMost(20, TimeUnit.SECONDS).until(() -> spool.depth() == 1 && !spool.inMemory());
            // The directory goes away and a file takes its place: nothing can be written there any more.
            for (Path p : Files.list(spoolDir).toList()) {
                Files.delete(p);
            }
            Files.delete(spoolDir);
            Files.writeString(spoolDir, "not a directory");
            for (int i = 2; i <= 30; i++) {
                shipper.submit(new Payload("POST", "/v1/samples", SpoolTest.body(i, 40), "#" + i, false));
            }
            await().atMost(20, TimeUnit.SECONDS).until(spool::inMemory);
            assertThat(shipper.problem()).isNotNull();
            down.set(0);
            await().atMost(20, TimeUnit.SECONDS).until(() -> shipper.pending() == 0);
            // #1 was on disk and went with the directory; everything after it was kept in memory and delivered.
            List<Integer> expected = new java.util.ArrayList<>();
            for (int i = 2; i <= 30; i++) {
                expected.add(i);
            }
            assertThat(delivered).containsExactlyElementsOf(expected);
            assertThat(shipper.alive()).isTrue();
            // One line naming the directory, not one per shipment.
            assertThat(lines.stream().filter(l -> l.startsWith("cannot write the spool directory " + spoolDir)))
                    .hasSize(1);
        } finally {
            spoolLog.removeHandler(capture);
            shipper.close(Duration.ofSeconds(1));
        }
    }
}
