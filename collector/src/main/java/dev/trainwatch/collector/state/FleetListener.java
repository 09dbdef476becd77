package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.StepEvent;
import java.util.List;

/**
 * Told about changes by the {@link Fleet}: alert delivery and the run history listen. Called on the thread that
 * caused the change (an ingest or {@code tick} caller), after the fleet's lock is released, in the order the
 * changes happened; calls never overlap. Implementations must return quickly (queue slow work such as HTTP or
 * disk) and may call back into the fleet. An exception thrown by a listener is logged and does not reach the
 * caller or other listeners.
 */
public interface FleetListener {

    /**
     * Whether this listener tells people (alerts): it then hears only of anomalies of runs that were seen training
     * (a step, a spec, a failure, a GPU reading), not of run ids that never were, so a flood of junk ids cannot
     * page anyone. Listeners that keep records (the history) hear of every anomaly.
     */
    default boolean notifiesPeople() {
        return false;
    }

    /**
     * Whether this listener uses {@link #onRunChanged}. When none of the fleet's listeners does (a collector without a
     * history), the fleet does not build the runs' summaries every few seconds only to hand them to nobody.
     */
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
     * A run appeared, got a spec, or its numbers moved: called on those events; while data flows at most once per
     * {@link FleetSettings#summaryInterval()} per run when its numbers moved materially (new peak memory, new steps,
     * an anomaly raised or resolved) and otherwise at most once a minute, so a history can be kept current without
     * writing on every sample. {@link Fleet#publishChangedSummaries()} sends the pending ones at once.
     */
    default void onRunChanged(RunSummary summary) {
    }

    /** A run ended (its active anomalies have been resolved just before). */
    default void onRunEnded(RunSummary summary) {
    }

    /**
     * Step reports were counted as the run's steps (with every rank logging, one per step), by whatever path they
     * came: an agent's batch, a steps request, a direct call.
     */
    default void onStepsApplied(String runId, List<StepEvent> steps) {
    }
}
