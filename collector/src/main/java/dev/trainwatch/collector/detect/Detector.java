package dev.trainwatch.collector.detect;

import java.util.Optional;

/**
 * One anomaly kind's rule. Implementations are stateless and thread-safe: everything they need (windows, spec,
 * estimate, the clock's "now") comes in the {@link RunContext}; hysteresis over time is the tracker's job, the
 * detector only says whether the condition holds at this evaluation.
 */
public interface Detector {

    AnomalyKind kind();

    /** A finding while the condition holds now; {@code active} lets the detector apply its lower "clear" threshold. */
    Optional<Finding> evaluate(RunContext run, boolean active);

    /**
     * A detector that judges a long window (minutes) against a long sustain may be asked less often than every
     * evaluation of its run: at most every this many seconds (0, the default: every evaluation). It is asked at once
     * whatever this says when another anomaly of the run was raised, changed or resolved since it was last asked,
     * so it never stays raised for a run another anomaly now explains.
     */
    default double everySeconds() {
        return 0;
    }
}
