package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.AnomalyTracker.Transition;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.protocol.RunFailure;
import java.util.List;

/**
 * The changes in a run's life that listeners hear of: an anomaly raised or resolved, the run's numbers moved, the
 * run failed or ended. Each is applied to the run and queued in the {@link Outbox}. Only called under the
 * {@link Fleet}'s lock.
 */
final class RunEvents implements EvaluationSchedule.Notifier {
    private final RunObservations observations;
    private final Outbox outbox;
    /** When detectors run; it reports its transitions back here. */
    private final EvaluationSchedule schedule;

    RunEvents(Registry registry, List<Detector> detectors, Predictor predictor, RunObservations observations,
            Outbox outbox) {
        this.observations = observations;
        this.outbox = outbox;
        this.schedule = new EvaluationSchedule(registry, detectors, predictor, observations, this);
    }

    @Override
    public void publish(String runId, Transition t) {
        Anomaly a = t.anomaly();
        if (t.raised()) {
            outbox.raised(runId, a);
        } else {
            outbox.resolved(runId, a);
        }
    }

    @Override
    public void notifyChanged(RunState run, double now) {
        run.lastChangeNotified = now;
        run.dirty = false;
        run.summaryDue = false;
        outbox.changed(observations.summarize(run, now));
    }

    /** The run ended: its active anomalies resolve, except {@code run_failed}, which is why it ended. */
    void end(RunState run, double now) {
        if (run.ended) {
            return;
        }
        run.ended = true;
        run.endedAt = now;
        for (Transition t : run.tracker.resolveAllExcept(now, AnomalyKind.RUN_FAILED)) {
            publish(run.runId, t);
        }
        outbox.ended(observations.summarize(run, now));
    }

    /** Why the run's processes failed: kept on the run and judged at once ({@code run_failed}). */
    void fail(RunState run, RunFailure failure, String host, double now) {
        run.failure = failure;
        run.failureHost = host;
        run.failureTs = now;
        run.dirty = true;
        run.summaryDue = true;
        schedule.evaluate(run, now);
    }

    /** Failures per detector since start, by kind. */
    java.util.Map<String, Long> detectorErrors() {
        return schedule.errors();
    }

    /** The run is judged now (a spec registered, a failure recorded). */
    void evaluate(RunState run, double now) {
        schedule.evaluate(run, now);
    }

    /** The run is judged when its evaluation is due, and its summary sent when due. */
    void maybeEvaluate(RunState run, double now) {
        schedule.maybeEvaluate(run, now);
    }
}
