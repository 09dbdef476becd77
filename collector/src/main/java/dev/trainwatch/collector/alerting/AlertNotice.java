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
 * @param endedWithRun true when {@code endsAt} is when the run ended while the anomaly was active: the alert
 *                   ends because nothing is left to watch, not because it was fixed
 */
public record AlertNotice(String runId, String kind, String severity, Instant startsAt, Instant endsAt,
                          String message, String suggestion, Map<String, Object> evidence, String previousSeverity,
                          boolean endedWithRun) {

    /** A notice that is not a change of severity. */
    public AlertNotice(String runId, String kind, String severity, Instant startsAt, Instant endsAt, String message,
                       String suggestion, Map<String, Object> evidence) {
        this(runId, kind, severity, startsAt, endsAt, message, suggestion, evidence, null, false);
    }

    /** What receivers are told when an alert ends with its run: said in words, not announced as resolved. */
    public static final String ENDED_WITH_RUN = "the run ended while this was active; it was not fixed";

    /** True when this notice reports that a firing anomaly changed severity. */
    public boolean severityChanged() {
        return previousSeverity != null && endsAt == null;
    }

    /** This notice as the change of severity from {@code previous}. */
    public AlertNotice changedFrom(String previous) {
        return new AlertNotice(runId, kind, severity, startsAt, endsAt, message, suggestion, evidence, previous, false);
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
        return new AlertNotice(runId, kind, severity, startsAt, at, message, suggestion, evidence, null, false);
    }

    /** This notice, ended unfixed with its run at {@code at}. */
    public AlertNotice endedWithRunAt(Instant at) {
        return new AlertNotice(runId, kind, severity, startsAt, at, message, suggestion, evidence, null, true);
    }
}
