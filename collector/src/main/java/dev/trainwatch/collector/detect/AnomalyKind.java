package dev.trainwatch.collector.detect;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * The anomaly kinds of the contract. {@link #wireName()} is the value of the {@code kind} JSON field and of the
 * {@code kind} metric label; dashboards and alert rules depend on these names.
 */
public enum AnomalyKind {
    OOM_RISK,
    MEMORY_ABOVE_ESTIMATE,
    DATA_STARVATION,
    STEP_TIME_ABOVE_ESTIMATE,
    GPU_UNDERUTILIZED,
    GPU_IDLE,
    THROTTLING,
    STRAGGLER,
    STALLED,
    XID_ERROR,
    AGENT_LOST,
    LOSS_NONFINITE,
    LOSS_SPIKE,
    RUN_FAILED,
    HOST_MEMORY,
    SPEC_MISMATCH;

    /** Lower snake case, e.g. {@code oom_risk}. */
    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind for a wire name, case-insensitive. */
    @JsonCreator
    public static AnomalyKind fromWireName(String name) {
        return valueOf(name.trim().toUpperCase(Locale.ROOT));
    }
}
