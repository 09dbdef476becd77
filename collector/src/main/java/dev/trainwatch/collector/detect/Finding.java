package dev.trainwatch.collector.detect;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a detector found on one evaluation: the condition holds now. The {@link AnomalyTracker} turns a sustained
 * finding into an {@link Anomaly}. Immutable.
 *
 * @param message    one line with the key numbers
 * @param evidence   the numbers (key names carry units)
 * @param sustain    how long the condition must hold before it is raised, when the evidence itself says so (the
 *                   newest two reports already span their time); null: the kind's sustain from
 *                   {@link DetectorSettings#hysteresis(AnomalyKind)}
 */
public record Finding(Severity severity, String message, Map<String, Object> evidence, String suggestion,
                      Duration sustain) {

    public Finding {
        evidence = evidence == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(evidence));
    }

    /** A finding held for the kind's usual sustain. */
    public Finding(Severity severity, String message, Map<String, Object> evidence, String suggestion) {
        this(severity, message, evidence, suggestion, null);
    }

    /** The same finding with its own sustain. */
    public Finding withSustain(Duration sustain) {
        return new Finding(severity, message, evidence, suggestion, sustain);
    }
}
