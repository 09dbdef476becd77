package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.StepEvent;
import java.util.List;

/**
 * Told about changes by the {@link Fleet} (alert delivery, the run history): after the fleet's lock is released, in
 * order, never concurrently (except {@link #onStepsApplied}). Implementations return quickly; an exception is logged
 * and reaches nobody else.
 */
public interface FleetListener {

    /** Alerting listeners hear only of anomalies of runs seen training, so a flood of junk ids pages nobody. */
    default boolean notifiesPeople() {
        return false;
    }

    /** When no listener wants {@link #onRunChanged}, the fleet builds no summaries for nobody. */
    default boolean wantsRunChanges() {
        return true;
    }

    /** An anomaly became active, or an active one changed severity (the argument carries the new one). */
    default void onAnomalyRaised(String runId, Anomaly anomaly) {
    }

    /** An active anomaly was resolved ({@code anomaly.active()} is false, {@code resolvedAt} set). */
    default void onAnomalyResolved(String runId, Anomaly anomaly) {
    }

    /**
     * A run appeared, got a spec, or its numbers moved: at most once per {@link FleetSettings#summaryInterval()}
     * per run for material changes, otherwise at most once a minute.
     */
    default void onRunChanged(RunSummary summary) {
    }

    /** A run ended (its active anomalies have been resolved just before). */
    default void onRunEnded(RunSummary summary) {
    }

    /**
     * Step reports were counted as the run's steps, by whatever path they came. Told on the thread that applied them
     * before its call into the fleet returns (not on the fleet's own delivery thread, so a scrape that follows sees
     * them whatever other listeners are doing), possibly while another call to this listener runs: in-memory work only.
     */
    default void onStepsApplied(String runId, List<StepEvent> steps) {
    }
}
