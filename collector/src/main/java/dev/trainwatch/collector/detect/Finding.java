package dev.trainwatch.collector.detect;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a detector found on one evaluation: the condition holds now. The {@link AnomalyTracker} turns a sustained
 * finding into an {@link Anomaly}. Immutable.
 *
 * @param severity   how urgent
 * @param message    one line with the key numbers
 * @param evidence   the numbers (key names carry units)
 * @param suggestion what to change
 */
public record Finding(Severity severity, String message, Map<String, Object> evidence, String suggestion) {

    public Finding {
        evidence = evidence == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(evidence));
    }
}
