package dev.trainwatch.collector.history;

import java.time.Instant;

/** One anomaly episode: raised at {@code since}, resolved at {@code resolved} (null while active), as raised. */
public record StoredAnomaly(String runId, String kind, String severity, Instant since, Instant resolved,
                            String message, String suggestion, String evidenceJson) {
}
