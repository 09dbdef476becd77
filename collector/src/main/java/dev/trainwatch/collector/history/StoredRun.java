package dev.trainwatch.collector.history;

import java.time.Instant;

/**
 * A run as the history database keeps it. JSON columns are kept as text in the wire format
 * ({@code dev.trainwatch.protocol.Json}), so the store does not depend on the collector's in-memory types.
 *
 * @param runId        run id
 * @param specJson     the run spec, or null when none was registered
 * @param estimateJson the estimate at registration, or null
 * @param summaryJson  the newest per-run summary (peak memory, median step time, data-wait share, …), or null
 * @param firstSeen    when the run first appeared
 * @param lastSeen     when it last changed
 * @param ended        when it ended, or null while running
 */
public record StoredRun(String runId, String specJson, String estimateJson, String summaryJson, Instant firstSeen,
                        Instant lastSeen, Instant ended) {
}
