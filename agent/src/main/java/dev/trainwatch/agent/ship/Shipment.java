package dev.trainwatch.agent.ship;

import java.util.concurrent.atomic.AtomicReference;

/**
 * One request to the collector, ready to send or replay byte for byte: a replayed batch carries its original
 * {@code seq} because the body is the same bytes. Immutable (the body array is never modified after creation),
 * except that its settle callback runs at most once.
 *
 * @param ordinal  position in the agent's send order, increasing; the spool replays by it
 * @param method   {@code POST} or {@code PUT}
 * @param path     request path under the collector's base URL, e.g. {@code /v1/samples}
 * @param gzipBody the JSON body, gzip-compressed
 * @param what     a short description for log lines, e.g. {@code samples seq 12}
 * @param settled  run once when the shipment's fate no longer depends on this process: taken or refused by the
 *                 collector, written to the spool on disk, or dropped; empty for none
 * @param mayCarrySteps true when the body may hold a batch's {@code run_steps}: a batch the agent put steps in, or
 *                 a batch read back from the spool (a previous agent may have); an older collector ignores them, and
 *                 the shipper then sends them in their own requests
 */
public record Shipment(long ordinal, String method, String path, byte[] gzipBody, String what,
                       AtomicReference<Runnable> settled, boolean mayCarrySteps) {

    /** A shipment read back (from the spool): a batch may carry steps. */
    public Shipment(long ordinal, String method, String path, byte[] gzipBody, String what) {
        this(ordinal, method, path, gzipBody, what, new AtomicReference<>(), Payload.SAMPLES_PATH.equals(path));
    }

    /** Runs the settle callback, once. */
    void settle() {
        Runnable callback = settled.getAndSet(null);
        if (callback != null) {
            callback.run();
        }
    }
}
