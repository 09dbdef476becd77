package dev.trainwatch.collector.alerting;

import java.time.Instant;
import java.util.Map;

/**
 * One anomaly as the outside world is told about it: firing while {@code endsAt} is null. The same anomaly keeps its
 * {@code startsAt} across re-sends so receivers de-duplicate.
 *
 * @param previousSeverity the severity a firing anomaly changed from (one notice, not a resolution and a new alert)
 * @param endedWithRun     the run ended while the anomaly was active: nothing is left to watch, it was not fixed
 */
public record AlertNotice(String runId, String kind, String severity, Instant startsAt, Instant endsAt,
                          String message, String suggestion, Map<String, Object> evidence, String previousSeverity,
                          boolean endedWithRun) {

    /** Said in words when an alert ends with its run, rather than announced as resolved. */
    public static final String ENDED_WITH_RUN = "the run ended while this was active; it was not fixed";

    public boolean severityChanged() {
        return previousSeverity != null && endsAt == null;
    }

    public AlertNotice changedFrom(String previous) {
        return new AlertNotice(runId, kind, severity, startsAt, endsAt, message, suggestion, evidence, previous, false);
    }

    public boolean firing() {
        return endsAt == null;
    }

    public String key() {
        return runId + "/" + kind;
    }

    public AlertNotice resolvedAt(Instant at) {
        return new AlertNotice(runId, kind, severity, startsAt, at, message, suggestion, evidence, null, false);
    }

    public AlertNotice endedWithRunAt(Instant at) {
        return new AlertNotice(runId, kind, severity, startsAt, at, message, suggestion, evidence, null, true);
    }
}
