package dev.trainwatch.collector.state;

import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.estimator.plan.RunPlans.Plan;
import dev.trainwatch.estimator.plan.RunPlans.Refused;
import dev.trainwatch.estimator.plan.RunPlans;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/** A run's view re-priced on other hardware ({@code GET /v1/runs/{id}/plans}) through the estimator's {@link RunPlans}. */
final class RunRepricing {

    private RunRepricing() {
    }

    /** @throws Refused when the run has no spec or no observed step yet */
    static ObservedRun observed(RunView view) {
        Estimate e = view.estimate();
        if (e == null || view.spec() == null) {
            throw new Refused("run '" + view.runId() + "' has no spec, so it cannot be re-priced: register one with PUT"
                    + " /v1/runs/" + view.runId() + " (or start it with trainwatch watch/run and --model)");
        }
        ObservedView o = view.observed();
        Double step = o == null ? null : o.stepSeconds();
        if (step == null || !(step > 0) || Double.isInfinite(step)) {
            throw new Refused("run '" + view.runId() + "' has no observed step time yet: it is re-priced from its own steps"
                    + " once they are reported");
        }
        return RunPlans.observed(e, step, o.dataWaitRatio(), o.textEncoderRatio(), o.vaeRatio(), o.lastStep());
    }

    /**
     * The observed run re-priced on each GPU of {@code gpuIds} (none: its own), with the GPU count and per-GPU batch
     * when given (null keeps the run's).
     */
    static RunPlans.RunResult forRun(Predictor predictor, RunView view, List<String> gpuIds, Integer gpus,
                                     Integer batch, GpuHourPrices prices) {
        ObservedRun observed = observed(view);
        List<String> ids = new ArrayList<>(new LinkedHashSet<>(gpuIds.isEmpty()
                ? List.of(observed.spec().gpu()) : gpuIds));
        List<Plan> plans = new ArrayList<>();
        List<String> notes = List.of();
        for (String id : ids) {
            RunSpec target = RunPlans.keepSamples(predictor::estimate, observed.spec(),
                    observed.spec().onHardware(id.strip(), gpus, batch), null);
            Repricing r = predictor.reprice(observed, target)
                    .orElseThrow(() -> new Refused("this collector's estimator cannot re-price runs"));
            if (plans.isEmpty()) {
                notes = r.notes();
            }
            plans.add(RunPlans.plan(r.target(), r.stepSeconds(), r.samplesPerSecond(), r.totalSeconds(),
                    r.remainingSeconds(), r.modelAnchor(), prices::price,
                    r.target().fits() ? null : "does not fit at this batch"));
        }
        return new RunPlans.RunResult(view.runId(), observed, notes, List.copyOf(plans));
    }
}
