package dev.trainwatch.agent.ship;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuReadings;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
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
 */
public record Shipment(long ordinal, String method, String path, byte[] gzipBody, String what,
                       AtomicReference<Runnable> settled) {

    public Shipment(long ordinal, String method, String path, byte[] gzipBody, String what) {
        this(ordinal, method, path, gzipBody, what, new AtomicReference<>());
    }

    /** Whether this is a batch with its readings column by column ({@code /v2/samples}). */
    boolean columns() {
        return Payload.COLUMNS_PATH.equals(path);
    }

    /**
     * This batch with its readings as rows, for {@code /v1/samples}: same ordinal, same sequence number, same
     * settle callback. Reads the body back with the wire codec (databind; only for a collector that refused
     * columns).
     *
     * @throws IOException when the body is not a gzip JSON batch (a corrupt spool file)
     */
    Shipment asRows() throws IOException {
        AgentBatch batch;
        try (java.io.InputStream in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gzipBody))) {
            batch = Json.MAPPER.readValue(in, AgentBatch.class);
        }
        AgentBatch rows;
        try {
            rows = GpuReadings.rows(batch);
        } catch (IllegalArgumentException e) {
            throw new IOException("not a batch of readings: " + e.getMessage(), e);
        }
        Payload payload = Payload.samples(rows);
        return new Shipment(ordinal, payload.method(), payload.path(), payload.gzipBody(), what, settled);
    }

    /** Runs the settle callback, once. */
    void settle() {
        Runnable callback = settled.getAndSet(null);
        if (callback != null) {
            callback.run();
        }
    }
}
