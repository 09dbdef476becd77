package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code oom_risk} before the sampling (validation) phase: the trainer generates samples beside its training state,
 * and where that peak does not fit, the run dies at its first sample, often after hours of caching and training.
 * Raised while the run trains, from the estimate's sampling peak above the GPU's memory, or from the memory the GPU
 * holds now (the run's and any other process's) plus what sampling adds beyond the training peak; only for a run known
 * to sample (its spec's {@code sample_every}, or a sampling phase its log announced), since every estimate prices one.
 */
final class SamplingRisk {

    private SamplingRisk() {
    }

    static Optional<Finding> evaluate(RunContext run, DetectorSettings.SharedGpu shared) {
        Estimate e = run.estimate();
        StepSeries steps = run.steps();
        if (e == null || e.samplingPeakMemoryBytes() <= 0
                || steps.size() > 0 && run.samplingTs() < steps.ts(steps.size() - 1)) {
            return Optional.empty(); // no sampling priced, or the run sampled and went on training: it fits
        }
        Integer every = run.spec() != null && run.spec().sampleEvery() != null ? run.spec().sampleEvery()
                : e.spec() != null ? e.spec().sampleEvery() : null;
        if (every == null && Double.isNaN(run.samplingTs())) {
            return Optional.empty();
        }
        long last = steps.size() > 0 ? steps.step(steps.size() - 1) : 0;
        String due = every == null ? "" : "; sampling due at step " + (last / every + 1) * every;
        long extra = Math.max(0, e.samplingPeakMemoryBytes() - e.peakMemoryBytes());
        GpuSeries worst = null;
        double worstNeed = Double.NEGATIVE_INFINITY;
        double worstUsed = Double.NaN;
        for (GpuSeries g : run.gpus()) {
            double used = WindowStats.maxMemory(g, run.now() - 300);
            if (!(g.memoryTotalBytes() > 0) || BaseDetector.stale(run, g) || Double.isNaN(used)) {
                continue;
            }
            // The estimate's peak on this card, or what the card holds now plus sampling's extra, whichever is more.
            double need = Math.max(e.samplingPeakMemoryBytes(), used + extra) - g.memoryTotalBytes();
            if (need > worstNeed) {
                worstNeed = need;
                worst = g;
                worstUsed = used;
            }
        }
        if (worst == null || worstNeed <= 0) {
            return Optional.empty();
        }
        double total = worst.memoryTotalBytes();
        boolean predicted = e.samplingPeakMemoryBytes() > total;
        Map<String, Object> evidence = Texts.gpuEvidence(worst);
        evidence.put("sampling_peak_memory_bytes", e.samplingPeakMemoryBytes());
        evidence.put("sampling_extra_bytes", extra);
        evidence.put("predicted_peak_memory_bytes", e.peakMemoryBytes());
        evidence.put("memory_used_bytes", Math.round(worstUsed));
        evidence.put("memory_total_bytes", Math.round(total));
        evidence.put("sampling_shortfall_bytes", Math.round(worstNeed));
        if (every != null) {
            evidence.put("sample_every", every);
        }
        String message = predicted
                ? String.format(Locale.ROOT, "sampling needs %s on %s, which has %s: the run will run out of memory "
                        + "at its first sampling", Texts.gib(e.samplingPeakMemoryBytes()), Texts.gpuName(worst),
                        Texts.gib(total)) + due
                : String.format(Locale.ROOT, "%s holds %s while training and sampling adds about %s: %s more than "
                        + "its %s, so the run will run out of memory at its first sampling", Texts.gpuName(worst),
                        Texts.gib(worstUsed), Texts.gib(extra), Texts.gib(worstNeed), Texts.gib(total)) + due;
        String suggestion = "sample at a smaller size or fewer frames (kohya's and musubi's prompt --w/--h/--f, "
                + "ai-toolkit's sample width/height/num_frames), or turn sampling off and sample from saved "
                + "checkpoints";
        List<GpuSeries.OtherProcess> strangers = SharedGpu.strangers(worst, shared);
        if (!strangers.isEmpty()) {
            evidence.put("other_processes", SharedGpu.evidence(strangers));
            message += "; not this run's: " + SharedGpu.describe(strangers);
            suggestion = SharedGpu.fix(worst, strangers) + "; or " + suggestion;
        }
        return Optional.of(new Finding(Severity.WARNING, message, evidence, suggestion));
    }
}
