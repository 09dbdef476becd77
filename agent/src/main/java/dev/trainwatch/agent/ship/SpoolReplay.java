package dev.trainwatch.agent.ship;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Delivers a spool directory carried back from a machine without a collector through the agent's own
 * {@link Shipper}, in order, deleting what is delivered, then stops. Not thread-safe.
 */
public final class SpoolReplay {

    /** No bound on a spool being replayed: nothing of it is dropped to make room. */
    private static final long NO_BOUND = Long.MAX_VALUE / 2;

    /**
     * What a replay did: entries found, taken by the collector, dropped (refused as bad, 4xx, or unreadable), whether
     * nothing was left waiting when it stopped, and the last delivery problem (one line, or null).
     */
    public record Outcome(int shipments, long delivered, long dropped, boolean complete, String problem) {
    }

    private SpoolReplay() {
    }

    /** Waits at most {@code timeout} for the collector to take it all; IllegalArgumentException: not a directory. */
    public static Outcome replay(Path dir, URI collector, Supplier<String> token, Duration timeout)
            throws InterruptedException {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(dir + " is not a directory");
        }
        Spool spool = new Spool(dir, NO_BOUND);
        int shipments = spool.depth();
        // Retries soon and often: the collector is on this machine and was just started.
        Backoff backoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(2), () -> 0.5);
        Shipper shipper = new Shipper(new HttpTransport(collector, token, Duration.ofSeconds(10)), spool, backoff,
                Sleeper.system());
        shipper.start();
        try {
            boolean complete = shipper.awaitEmpty(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return new Outcome(shipments, shipper.delivered(), shipper.dropped(), complete, shipper.problem());
        } finally {
            shipper.close(Duration.ZERO);
        }
    }
}
