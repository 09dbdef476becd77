package dev.trainwatch.agent.ship;

/**
 * One request to the collector, ready to send or replay byte for byte: a replayed batch carries its original
 * {@code seq} because the body is the same bytes. Immutable (the body array is never modified after creation).
 *
 * @param ordinal  position in the agent's send order, increasing; the spool replays by it
 * @param method   {@code POST} or {@code PUT}
 * @param path     request path under the collector's base URL, e.g. {@code /v1/samples}
 * @param gzipBody the JSON body, gzip-compressed
 * @param what     a short description for log lines, e.g. {@code samples seq 12}
 */
public record Shipment(long ordinal, String method, String path, byte[] gzipBody, String what) {
}
