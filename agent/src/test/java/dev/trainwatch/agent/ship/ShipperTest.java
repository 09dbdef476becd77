package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShipperTest {

    @TempDir
    Path dir;

    /** Answers by the body's first byte; records what it was sent and what it accepted. */
    static final class FakeTransport implements Transport {
        final List<Integer> attempts = Collections.synchronizedList(new ArrayList<>());
        final List<Integer> accepted = Collections.synchronizedList(new ArrayList<>());
        volatile boolean down;
        volatile IntUnaryOperator status = id -> 200;

        @Override
        public Response send(Shipment shipment) throws IOException {
            int id = SpoolTest.idOf(shipment);
            attempts.add(id);
            if (down) {
                throw new ConnectException("Connection refused");
            }
            int answer = status.applyAsInt(id);
            if (answer == 200) {
                accepted.add(id);
            }
            return new Response(answer, "");
        }
    }

    final List<Duration> sleeps = new CopyOnWriteArrayList<>();
    final Sleeper fastSleeper = d -> {
        sleeps.add(d);
        Thread.sleep(5);
    };
    final Backoff backoff = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30), () -> 0.0);

    static Payload payload(int id) {
        return new Payload("POST", "/v1/samples", SpoolTest.body(id, 40), "#" + id, false);
    }

    @Test
    void aCollectorAtItsLimitIsRetriedAndTheRefusalSaidInOneLineThatDoesNotChangeWithTheRetryDelay() throws Exception {
        AtomicInteger refusals = new AtomicInteger();
        AtomicBoolean limitFull = new AtomicBoolean(true);
        Transport full = shipment -> limitFull.get()
                ? new Transport.Response(429, "{\"error\":\"GPU limit 4,096 reached: every slot holds a GPU that"
                        + " reported in the last 10 minutes; retry in " + (600 - refusals.incrementAndGet())
                        + " s\",\"limit\":\"gpus\"}")
                : new Transport.Response(200, "{}");
        Shipper shipper = new Shipper(full, new Spool(dir, 1 << 20), backoff, fastSleeper);
        shipper.start();
        shipper.submit(payload(1));
        await().atMost(10, TimeUnit.SECONDS).until(() -> refusals.get() >= 3);
        assertThat(shipper.problem()).isEqualTo("collector answered HTTP 429 (GPU limit 4,096 reached); spooling and"
                + " retrying");
        limitFull.set(false); // the collector made room (or was given a larger --max-gpus)
        await().atMost(10, TimeUnit.SECONDS).until(() -> shipper.pending() == 0);
        assertThat(shipper.delivered()).isEqualTo(1);
        assertThat(shipper.dropped()).as("refused for room: retried, never dropped").isZero();
        shipper.close();
        assertThat(Shipper.refusal("not json")).isEmpty();
        assertThat(Shipper.refusal("{\"error\":\"bad request\"}")).isEqualTo(" (bad request)");
    }

    @Test
    void deliversInOrderAcrossAnOutageAndBacksOff() throws Exception {
        FakeTransport transport = new FakeTransport();
        Shipper shipper = new Shipper(transport, new Spool(dir, 1 << 20), backoff, fastSleeper);
        shipper.start();
        for (int i = 1; i <= 5; i++) {
            shipper.submit(payload(i));
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> transport.accepted.size() == 5);
        transport.down = true;
        for (int i = 6; i <= 40; i++) {
            shipper.submit(payload(i));
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> sleeps.size() >= 4);
        assertThat(shipper.pending()).isEqualTo(35);
        assertThat(shipper.spoolBytes()).isEqualTo(35 * 40);
        transport.down = false;
        await().atMost(10, TimeUnit.SECONDS).until(() -> shipper.pending() == 0);
        shipper.close();

        List<Integer> expected = new ArrayList<>();
        for (int i = 1; i <= 40; i++) {
            expected.add(i);
        }
        assertThat(transport.accepted).containsExactlyElementsOf(expected);
        assertThat(sleeps.subList(0, 4)).containsExactly(Duration.ofMillis(250), Duration.ofMillis(500),
                Duration.ofMillis(1000), Duration.ofMillis(2000));
        assertThat(shipper.dropped()).isZero();
    }

    @Test
    void serverErrorsAndThrottlingAreRetriedBadRequestsAreDroppedAndCounted() throws Exception {
        FakeTransport transport = new FakeTransport();
        List<Integer> failedOnce = new CopyOnWriteArrayList<>();
        transport.status = id -> {
            if (id == 3) {
                return 422;
            }
            if ((id == 2 || id == 4 || id == 5) && !failedOnce.contains(id)) {
                failedOnce.add(id);
                return id == 2 ? 503 : id == 4 ? 429 : 401;
            }
            return 200;
        };
        Shipper shipper = new Shipper(transport, new Spool(dir, 1 << 20), backoff, fastSleeper);
        shipper.start();
        for (int i = 1; i <= 6; i++) {
            shipper.submit(payload(i));
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> shipper.pending() == 0);
        shipper.close();
        assertThat(transport.accepted).containsExactly(1, 2, 4, 5, 6);
        assertThat(transport.attempts).containsExactly(1, 2, 2, 3, 4, 4, 5, 5, 6);
        assertThat(shipper.dropped()).isEqualTo(1);
    }

    @Test
    void closeWhileTheCollectorIsDownSpoolsEverythingForTheNextAgent() throws Exception {
        FakeTransport transport = new FakeTransport();
        transport.down = true;
        Shipper shipper = new Shipper(transport, new Spool(dir, 1 << 20), backoff, d -> Thread.sleep(60_000));
        shipper.start();
        for (int i = 1; i <= 3; i++) {
            shipper.submit(payload(i));
        }
        await().atMost(10, TimeUnit.SECONDS).until(() -> !transport.attempts.isEmpty());
        long started = System.nanoTime();
        shipper.close(Duration.ofSeconds(5));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));

        Spool left = new Spool(dir, 1 << 20);
        assertThat(left.depth()).isEqualTo(3);

        FakeTransport up = new FakeTransport();
        Shipper next = new Shipper(up, left, backoff, fastSleeper);
        next.start();
        next.submit(payload(4));
        await().atMost(10, TimeUnit.SECONDS).until(() -> up.accepted.size() == 4);
        next.close();
        assertThat(up.accepted).containsExactly(1, 2, 3, 4);
    }

    @Test
    void closeDeliversWhatIsQueuedWhenTheCollectorIsUp() throws Exception {
        FakeTransport transport = new FakeTransport();
        Shipper shipper = new Shipper(transport, new Spool(dir, 1 << 20), backoff, fastSleeper);
        for (int i = 1; i <= 10; i++) {
            shipper.submit(payload(i));
        }
        shipper.start();
        shipper.close(Duration.ofSeconds(10));
        assertThat(transport.accepted).hasSize(10);
        assertThat(new Spool(dir, 1 << 20).depth()).isZero();
    }

    /** Regression: a shipment spilled to disk while in flight was delivered again from the spool. */
    @Test
    void aBacklogSpilledWhileAShipmentIsInFlightIsNotSentTwice() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        FakeTransport inner = new FakeTransport();
        Transport slow = shipment -> {
            if (SpoolTest.idOf(shipment) == 1) {
                release.await();
            }
            return inner.send(shipment);
        };
        Shipper shipper = new Shipper(slow, new Spool(dir, 1 << 20), backoff, fastSleeper);
        shipper.start();
        shipper.submit(payload(1));
        await().atMost(10, TimeUnit.SECONDS).until(() -> shipper.pending() == 1 && inner.attempts.isEmpty());
        for (int i = 2; i <= Shipper.MEMORY_LIMIT + 5; i++) {
            shipper.submit(payload(i));
        }
        release.countDown();
        await().atMost(10, TimeUnit.SECONDS).until(() -> shipper.pending() == 0);
        shipper.close();
        List<Integer> expected = new ArrayList<>();
        for (int i = 1; i <= Shipper.MEMORY_LIMIT + 5; i++) {
            expected.add(i);
        }
        assertThat(inner.attempts).containsExactlyElementsOf(expected);
    }
}
