package dev.trainwatch.collector.alerting;

import java.time.Instant;
import java.util.Map;

/**
 * One anomaly as the outside world is told about it: firing while {@code endsAt} is null, resolved once set.
 * Immutable; the same anomaly (run, kind) keeps its {@code startsAt} across re-sends so receivers de-duplicate.
 *
 * @param runId      the run
 * @param kind       anomaly kind ({@code data_starvation}, …)
 * @param severity   {@code warning} or {@code critical}
 * @param startsAt   when the anomaly was raised
 * @param endsAt     when it was resolved; null while firing
 * @param message    what is wrong, one line
 * @param suggestion what to do, one line
 * @param evidence   the numbers that raised it
 * @param previousSeverity the severity this notice replaces when it reports a change of severity of a firing
 *                   anomaly (one notice, not a resolution and a new alert), else null
 */
public record AlertNotice(String runId, String kind, String severity, Instant startsAt, Instant endsAt,
                          String message, String suggestion, Map<String, Object> evidence, String previousSeverity) {

    /** A notice that is not a change of severity. */
    public AlertNotice(String runId, String kind, String severity, Instant startsAt, Instant endsAt, String message,
                       String suggestion, Map<String, Object> evidence) {
        this(runId, kind, severity, startsAt, endsAt, message, suggestion, evidence, null);
    }

    /** True when this notice reports that a firing anomaly changed severity. */
    public boolean severityChanged() {
        return previousSeverity != null && endsAt == null;
    }

    /** This notice as the change of severity from {@code previous}. */
    public AlertNotice changedFrom(String previous) {
        return new AlertNotice(runId, kind, severity, startsAt, endsAt, message, suggestion, evidence, previous);
    }

    /** True while the anomaly is active. */
    public boolean firing() {
        return endsAt == null;
    }

    /** The identity receivers de-duplicate on. */
    public String key() {
        return runId + "/" + kind;
    }

    /** This notice, resolved at {@code at}. */
    public AlertNotice resolvedAt(Instant at) {
        return new AlertNotice(runId, kind, severity, startsAt, at, message, suggestion, evidence, null);
    }
}
