package dev.trainwatch.collector.history;

import java.time.Instant;

/**
 * One anomaly episode: raised at {@code since}, resolved at {@code resolved} (null while active).
 *
 * @param runId        run id
 * @param kind         anomaly kind
 * @param severity     {@code warning} or {@code critical}
 * @param since        when it was raised
 * @param resolved     when it was resolved, or null while active
 * @param message      the message at raise time
 * @param suggestion   the suggestion at raise time
 * @param evidenceJson the evidence at raise time, JSON object text
 */
public record StoredAnomaly(String runId, String kind, String severity, Instant since, Instant resolved,
                            String message, String suggestion, String evidenceJson) {
}
