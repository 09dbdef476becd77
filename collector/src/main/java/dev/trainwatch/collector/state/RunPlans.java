package dev.trainwatch.collector.state;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;

/**
 * A run on other hardware: plans side by side for a list of GPUs (fits, largest batch, step, samples per second,
 * time and cost to finish), priced from the catalog or, for a run that was observed, re-priced from what it did
 * ({@code Estimator.reprice}). One implementation for the collector's {@code GET /v1/runs/{id}/plans} and for
 * {@code trainwatch estimate --compare-gpus} / {@code --from-run}, so both say the same. Pure; thread-safe.
 */
public final class RunPlans {

    private RunPlans() {
    }

    /**
     * One GPU's plan.
     *
     * @param gpu               catalog GPU id
     * @param gpus              GPU count
     * @param fits              whether the per-GPU batch fits
     * @param batch             per-GPU batch priced (the largest that fits, with accumulation, when the asked one does not)
     * @param gradAccumulation  accumulation steps
     * @param maxBatch          largest per-GPU batch that fits
     * @param peakMemoryBytes   predicted peak per GPU
     * @param gpuMemoryBytes    the GPU's memory
     * @param stepSeconds       seconds per optimizer step
     * @param samplesPerSecond  samples per second over all GPUs
     * @param totalSteps        planned steps, when known
     * @param totalSeconds      seconds for all of them
     * @param remainingSeconds  seconds left after the observed last step (re-priced runs)
     * @param gpuHours          GPU-hours for all the steps
     * @param cost              those GPU-hours at the price per GPU-hour, when one is set for the GPU
     * @param anchor            observed ÷ priced GPU work of the source (re-priced runs), null when from the catalog
     * @param note              why the plan differs from what was asked, or null
     */
    public record Plan(String gpu, int gpus, boolean fits, int batch, int gradAccumulation, int maxBatch,
                       long peakMemoryBytes, long gpuMemoryBytes, double stepSeconds, double samplesPerSecond,
                       Long totalSteps, Double totalSeconds, Double remainingSeconds, Double gpuHours, Double cost,
                       Double anchor, String note) {
    }

    /**
     * An observed run's plans.
     *
     * @param runId        the run
     * @param observed     what anchored them (spec as it ran, median step, data and encoder seconds, last step)
     * @param notes        how the observation was read (the re-pricing's own notes, from the first plan)
     * @param plans        one per GPU asked, in order
     */
    public record RunResult(String runId, ObservedRun observed, List<String> notes, List<Plan> plans) {
    }

    /** A run that cannot be re-priced (no spec, no observed step): one line for the user. */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * What the collector observed of a run, as the anchor of a re-pricing: the run's spec as the estimator resolved
     * it, its median step, its data timer (which holds the online encoders when the log does not time them apart,
     * as PixArt's {@code time_data} does) and its encoder timers (Sana's {@code lm:}/{@code vae:}).
     *
     * @throws Refused when the run has no spec or no observed step yet
     */
    public static ObservedRun observed(RunView view) {
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
        return observed(e, step, o.dataWaitRatio(), o.textEncoderRatio(), o.vaeRatio(), o.lastStep());
    }

    /**
     * The anchor of a re-pricing from the shares of the step the log timed (the collector's run view, or a run's
     * summary in the history).
     *
     * @param resolved         the run's estimate (its spec as the estimator resolved it)
     * @param step             observed median seconds per step
     * @param dataWaitRatio    share in the log's data timer, null when the log has none
     * @param textEncoderRatio share in the text encoder when timed apart (Sana), else null
     * @param vaeRatio         share in the VAE when timed apart (Sana), else null
     * @param lastStep         newest step, null when unknown
     */
    public static ObservedRun observed(Estimate resolved, double step, Double dataWaitRatio, Double textEncoderRatio,
                                       Double vaeRatio, Long lastStep) {
        double cap = 0.999 * step;
        Double data = dataWaitRatio == null ? null : Math.min(cap, dataWaitRatio * step);
        boolean split = textEncoderRatio != null || vaeRatio != null;
        Double encoders = null;
        if (split) {
            double enc = Math.min(cap, ((textEncoderRatio == null ? 0 : textEncoderRatio)
                    + (vaeRatio == null ? 0 : vaeRatio)) * step);
            encoders = enc;
            if (data != null && data + enc >= step) {
                data = Math.max(0, cap - enc);
            }
        }
        boolean online = "online".equalsIgnoreCase(resolved.spec().features());
        return new ObservedRun(resolved.spec(), step, data, encoders, lastStep, !split && online && data != null);
    }

    /**
     * The observed run re-priced on each GPU of {@code gpuIds}, with the GPU count and per-GPU batch when given (null
     * keeps the run's). A run keeps its samples: when the global batch changes and the spec has a total, the
     * planned steps scale by the ratio of global batches.
     *
     * @throws InvalidSpecException for an unknown GPU or an impossible target (one line)
     */
    public static RunResult forRun(Predictor predictor, RunView view, List<String> gpuIds, Integer gpus, Integer batch,
                                   GpuHourPrices prices) {
        ObservedRun observed = observed(view);
        List<String> ids = new ArrayList<>(new LinkedHashSet<>(gpuIds.isEmpty()
                ? List.of(observed.spec().gpu()) : gpuIds));
        List<Plan> plans = new ArrayList<>();
        List<String> notes = List.of();
        for (String id : ids) {
            RunSpec target = keepSamples(predictor, observed.spec(),
                    observed.spec().onHardware(id.strip(), gpus, batch), null);
            Repricing r = predictor.reprice(observed, target)
                    .orElseThrow(() -> new Refused("this collector's estimator cannot re-price runs"));
            if (plans.isEmpty()) {
                notes = r.notes();
            }
            plans.add(plan(r.target(), r.stepSeconds(), r.samplesPerSecond(), r.totalSeconds(), r.remainingSeconds(),
                    r.modelAnchor(), prices, r.target().fits() ? null : "does not fit at this batch"));
        }
        return new RunResult(view.runId(), observed, notes, List.copyOf(plans));
    }

    /**
     * A re-priced run trains the same samples: when the target's global batch differs and {@code askedTotalSteps}
     * is null, its planned steps scale by the ratio of global batches.
     */
    public static RunSpec keepSamples(Predictor predictor, RunSpec source, RunSpec target, Long askedTotalSteps) {
        if (source.totalSteps() == null || askedTotalSteps != null) {
            return target;
        }
        Estimate from = predictor.estimate(source.withPhysics(source.kernels(), source.attentionPrecision(),
                source.loraRank(), source.loraTargets(), null, null));
        Estimate to = predictor.estimate(target);
        long sourceGlobal = (long) from.spec().batch() * from.spec().gpus() * from.spec().gradAccumulation();
        long targetGlobal = (long) to.spec().batch() * to.spec().gpus() * to.spec().gradAccumulation();
        if (sourceGlobal == targetGlobal) {
            return target;
        }
        long steps = (long) Math.ceil((double) source.totalSteps() * sourceGlobal / targetGlobal);
        return target.overriddenBy(new RunSpec(null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null, null, steps));
    }

    /** A GPU's plan from the catalog: at the asked batch when it fits, else at the largest batch with accumulation. */
    public static Plan fromCatalog(Predictor predictor, RunSpec target, GpuHourPrices prices) {
        Estimate e = predictor.estimate(target);
        String note = null;
        if (!e.fits() && e.maxBatch() > 0) {
            int b = e.spec().batch();
            int steps = (b + e.maxBatch() - 1) / e.maxBatch();
            int micro = (b + steps - 1) / steps;
            int accumulation = steps * e.spec().gradAccumulation();
            RunSpec smaller = target.overriddenBy(new RunSpec(null, null, null, micro, null, null, null, null, null, null,
                    null, null, null, null, null, accumulation, null));
            Estimate fitted = predictor.estimate(smaller);
            note = "batch " + b + " does not fit: priced as " + micro + " x " + accumulation + " accumulation steps";
            return plan(fitted, fitted.stepSeconds(), fitted.samplesPerSecond(), fitted.totalSeconds(), null, null,
                    prices, note);
        }
        if (!e.fits()) {
            note = "does not fit even at batch 1 (see trainwatch estimate --gpu " + e.gpu() + " for what helps)";
        }
        return plan(e, e.stepSeconds(), e.samplesPerSecond(), e.totalSeconds(), null, null, prices, note);
    }

    /** A plan from an estimate and the step, throughput and durations priced for it. */
    public static Plan plan(Estimate e, double step, double samples, Double total, Double remaining, Double anchor,
                            GpuHourPrices prices, String note) {
        Objects.requireNonNull(prices, "prices");
        RunSpec s = e.spec();
        Double gpuHours = total == null ? null : total * s.gpus() / 3600;
        double price = prices.price(e.gpu());
        Double cost = gpuHours == null || Double.isNaN(price) ? null : gpuHours * price;
        return new Plan(e.gpu(), s.gpus(), e.fits(), s.batch(), s.gradAccumulation(), e.maxBatch(), e.peakMemoryBytes(),
                e.gpuMemoryBytes(), step, samples, s.totalSteps(), total, remaining, gpuHours, cost, anchor, note);
    }
}
