package dev.trainwatch.estimator.plan;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * A run on other hardware: plans side by side for a list of GPUs (fits, largest batch, step, samples per second,
 * time and cost to finish), priced from the catalog or re-priced from what an observed run did
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
     * @param fits              whether the per-GPU batch fits
     * @param batch             per-GPU batch priced (the largest that fits, with accumulation, when the asked one does not)
     * @param maxBatch          largest per-GPU batch that fits
     * @param peakMemoryBytes   predicted peak per GPU
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
     * The anchor of a re-pricing from the shares of the step the log timed (the collector's run view, or a run's
     * summary in the history). The data timer holds the online encoders when the log does not time them apart (as
     * PixArt's {@code time_data} does); Sana's {@code lm:}/{@code vae:} time them apart.
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
     * A re-priced run trains the same samples: when the target's global batch differs and {@code askedTotalSteps}
     * is null, its planned steps scale by the ratio of global batches.
     */
    public static RunSpec keepSamples(Function<RunSpec, Estimate> estimate, RunSpec source, RunSpec target,
                                      Long askedTotalSteps) {
        if (source.totalSteps() == null || askedTotalSteps != null) {
            return target;
        }
        Estimate from = estimate.apply(source.withPhysics(source.kernels(), source.attentionPrecision(),
                source.loraRank(), source.loraTargets(), null, null));
        Estimate to = estimate.apply(target);
        long sourceGlobal = (long) from.spec().batch() * from.spec().gpus() * from.spec().gradAccumulation();
        long targetGlobal = (long) to.spec().batch() * to.spec().gpus() * to.spec().gradAccumulation();
        if (sourceGlobal == targetGlobal) {
            return target;
        }
        long steps = (long) Math.ceil((double) source.totalSteps() * sourceGlobal / targetGlobal);
        return target.overriddenBy(new RunSpec(null, null, null, null, null, null, null, null, null, null, null, null,
                null, null, null, null, steps));
    }

    /**
     * A GPU's plan from the catalog: at the asked batch when it fits, else at the largest batch with accumulation.
     *
     * @param pricePerGpuHour the price of one hour of a GPU by its catalog id, NaN when none applies
     */
    public static Plan fromCatalog(Function<RunSpec, Estimate> estimate, RunSpec target,
                                   ToDoubleFunction<String> pricePerGpuHour) {
        Estimate e = estimate.apply(target);
        if (!e.fits() && e.maxBatch() > 0) {
            int b = e.spec().batch();
            int steps = (b + e.maxBatch() - 1) / e.maxBatch();
            int micro = (b + steps - 1) / steps;
            int accumulation = steps * e.spec().gradAccumulation();
            RunSpec smaller = target.overriddenBy(new RunSpec(null, null, null, micro, null, null, null, null, null, null,
                    null, null, null, null, null, accumulation, null));
            Estimate fitted = estimate.apply(smaller);
            String note = "batch " + b + " does not fit: priced as " + micro + " x " + accumulation + " accumulation steps";
            return plan(fitted, fitted.stepSeconds(), fitted.samplesPerSecond(), fitted.totalSeconds(), null, null,
                    pricePerGpuHour, note);
        }
        String note = e.fits() ? null
                : "does not fit even at batch 1 (see trainwatch estimate --gpu " + e.gpu() + " for what helps)";
        return plan(e, e.stepSeconds(), e.samplesPerSecond(), e.totalSeconds(), null, null, pricePerGpuHour, note);
    }

    /** A plan from an estimate and the step, throughput and durations priced for it. */
    public static Plan plan(Estimate e, double step, double samples, Double total, Double remaining, Double anchor,
                            ToDoubleFunction<String> pricePerGpuHour, String note) {
        RunSpec s = e.spec();
        Double gpuHours = total == null ? null : total * s.gpus() / 3600;
        double price = pricePerGpuHour.applyAsDouble(e.gpu());
        Double cost = gpuHours == null || Double.isNaN(price) ? null : gpuHours * price;
        return new Plan(e.gpu(), s.gpus(), e.fits(), s.batch(), s.gradAccumulation(), e.maxBatch(), e.peakMemoryBytes(),
                e.gpuMemoryBytes(), step, samples, s.totalSteps(), total, remaining, gpuHours, cost, anchor, note);
    }
}
