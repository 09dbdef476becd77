package dev.trainwatch.collector.alerting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A webhook that takes longer to answer than the old 5-s timeout gets one notification, not one per retry, and the
 * request names itself with an idempotency key.
 */
@Timeout(60)
class SlowWebhookTest {

    @Test
    void aSlowReceiverGetsOneNotificationWithAnIdempotencyKey() throws Exception {
        List<String> keys = new CopyOnWriteArrayList<>();
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        ExecutorService threads = Executors.newCachedThreadPool();
        receiver.setExecutor(threads); // a retry is counted the moment it arrives, not after the slow answer
        receiver.createContext("/hook", exchange -> {
            keys.add(String.valueOf(exchange.getRequestHeaders().getFirst(HttpJsonPoster.IDEMPOTENCY_KEY)));
            exchange.getRequestBody().readAllBytes();
            try {
                Thread.sleep(7_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        List<String> outcomes = new CopyOnWriteArrayList<>();
        URI hook = URI.create("http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook");
        AlertDispatcher dispatcher = new AlertDispatcher(List.of(new WebhookSink(hook, null)),
                AlertDispatcher.Settings.defaults(), Clock.systemUTC(), line -> { });
        try {
            dispatcher.onOutcome(outcomes::add);
            dispatcher.publish(AlertDispatcherTest.notice("run-1", "stalled"));
            await().atMost(Duration.ofSeconds(40)).until(() -> outcomes.contains("ok"));
            assertThat(outcomes).containsExactly("ok");
            assertThat(keys).singleElement().asString().matches("[0-9a-f]{32}");
        } finally {
            dispatcher.close();
            receiver.stop(0);
            threads.shutdownNow();
        }
    }
}
