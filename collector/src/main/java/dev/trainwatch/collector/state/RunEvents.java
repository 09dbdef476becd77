package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.AnomalyTracker.Transition;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.StepEvent;
import java.util.List;
import java.util.Map;

/** The changes in a run's life that listeners hear of, applied to the run and queued in the {@link Outbox}. */
final class RunEvents implements EvaluationSchedule.Notifier {
    private final Registry registry;
    private final RunObservations observations;
    private final Outbox outbox;
    /** When detectors run; it reports its transitions back here. */
    private final EvaluationSchedule schedule;

    RunEvents(Registry registry, List<Detector> detectors, Predictor predictor, RunObservations observations,
            Outbox outbox) {
        this.registry = registry;
        this.observations = observations;
        this.outbox = outbox;
        this.schedule = new EvaluationSchedule(registry, detectors, predictor, observations, this);
    }

    @Override
    public void publish(RunState run, Transition t) {
        outbox.anomaly(run.runId(), t.anomaly(), t.raised(), observedTraining(run));
    }

    /** Whether the run was ever seen training (a step, a spec, a failure, a GPU reading): only then are people told. */
    private boolean observedTraining(RunState run) {
        if (run.lastCountedStep() >= 0 || run.registeredSpec() != null || run.failure() != null
                || run.tracker().isActive(AnomalyKind.RUN_FAILED)) {
            return true;
        }
        for (GpuState g : registry.runGpus(run)) {
            if (g.latest != null) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void notifyChanged(RunState run, double now) {
        run.notified(now);
        if (outbox.wantsRunChanges()) {
            outbox.changed(observations.summarize(run, now));
        }
    }

    void stepsCounted(String runId, List<StepEvent> counted) {
        outbox.stepsApplied(runId, List.copyOf(counted));
    }

    /**
     * The run ended: new input is judged first, then its active anomalies end with it ({@link Anomaly#endedWithRun}),
     * except {@code run_failed}, which stays.
     */
    void end(RunState run, double now) {
        if (run.ended()) {
            return;
        }
        if (run.inputSinceJudged()) {
            schedule.evaluate(run, now);
        }
        run.end(now);
        for (Transition t : run.tracker().endAllExcept(now, AnomalyKind.RUN_FAILED)) {
            publish(run, t);
        }
        outbox.ended(observations.summarize(run, now));
    }

    /** Why the run's processes failed: judged at once ({@code run_failed}); ignored for a run its user stopped. */
    void fail(RunState run, RunFailure failure, String host, double now) {
        if (run.stoppedBy() != null) {
            return; // its user stopped it: the traceback the signal left is how it stopped, not a failure
        }
        run.fail(failure, host, now);
        schedule.evaluate(run, now);
    }

    /** Evaluations and their seconds per detector since start, by kind. */
    Map<String, DetectorCost.Total> detectorCosts() {
        return schedule.costs();
    }

    /** Failures per detector since start, by kind. */
    Map<String, Long> detectorErrors() {
        return schedule.errors();
    }

    /** The run is judged now (a spec registered, a failure recorded). */
    void evaluate(RunState run, double now) {
        schedule.evaluate(run, now);
    }

    /** New input of the run: judged when due; urgent input within a second whatever the run's spacing. */
    void maybeEvaluate(RunState run, double now, boolean urgent) {
        schedule.maybeEvaluate(run, now, urgent);
    }

    /** Time passed: the run is judged when input arrived since it last was, or after a while without input. */
    void onTick(RunState run, double now) {
        schedule.onTick(run, now);
    }
}
