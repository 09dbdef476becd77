package dev.trainwatch.collector.history;

import java.time.Instant;

/** A run as the history keeps it: JSON columns as wire-format text (null when absent), so the store needs no collector types. */
public record StoredRun(String runId, String specJson, String estimateJson, String summaryJson, Instant firstSeen,
                        Instant lastSeen, Instant ended) {
}
