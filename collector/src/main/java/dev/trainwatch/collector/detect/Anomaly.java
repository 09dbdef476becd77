package dev.trainwatch.collector.detect;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Something wrong with a run, as shown in {@code GET /v1/runs/{id}} ({@code anomalies[]}), handed to
 * {@code FleetListener}s and kept in the alert history. Immutable; times are unix seconds.
 *
 * @param severity   {@code warning} or {@code critical}
 * @param active     true while the condition holds (with hysteresis); false once resolved
 * @param since      unix seconds when it was raised (at its current severity)
 * @param resolvedAt unix seconds when it was resolved; null while active
 * @param message    one line saying what is wrong, with the key numbers
 * @param evidence   the numbers that raised it (ordered, base units in the key names)
 * @param suggestion a concrete change, with numbers where the estimator gives them
 * @param endedWithRun true when the run ended while it was active: it stopped being watched at
 *                   {@code resolvedAt}, it was not fixed ({@code ended_with_run} on the wire)
 */
public record Anomaly(AnomalyKind kind, Severity severity, boolean active, double since, Double resolvedAt,
                      String message, Map<String, Object> evidence, String suggestion, boolean endedWithRun) {

    public Anomaly {
        evidence = evidence == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(evidence));
    }

    /** An anomaly that did not end with its run. */
    public Anomaly(AnomalyKind kind, Severity severity, boolean active, double since, Double resolvedAt,
                   String message, Map<String, Object> evidence, String suggestion) {
        this(kind, severity, active, since, resolvedAt, message, evidence, suggestion, false);
    }

    /** This anomaly, resolved at {@code ts}: its condition cleared. */
    public Anomaly resolved(double ts) {
        return new Anomaly(kind, severity, false, since, ts, message, evidence, suggestion, false);
    }

    /** This anomaly, still unfixed when its run ended at {@code ts}: no longer active, never resolved. */
    public Anomaly endedWithRun(double ts) {
        return new Anomaly(kind, severity, false, since, ts, message, evidence, suggestion, true);
    }
}
