package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Suggestion;
import dev.trainwatch.protocol.RunSpec;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * {@code oom_risk}: the run is about to run out of device memory. Caught OOMs ({@link #caughtOoms}) first, then the
 * worst of headroom, memory trend, largest bucket and sampling ({@link SamplingRisk}), as docs/DETECTORS.md says.
 */
public final class OomRiskDetector extends BaseDetector {

    /** The span over which memory must still be growing for a trend to count. */
    private static final double RECENT_SECONDS = 30;
    private static final double CAUGHT_OOM_SECONDS = 600;

    private final DetectorSettings.OomRisk s;
    private final DetectorSettings.SharedGpu shared;

    public OomRiskDetector(DetectorSettings settings) {
        super(AnomalyKind.OOM_RISK);
        this.s = settings.oomRisk();
        this.shared = settings.sharedGpu();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        Optional<Finding> caught = caughtOoms(run);
        if (caught.isPresent()) {
            return caught;
        }
        Optional<Finding> headroom = headroom(run, active);
        if (headroom.isPresent() && headroom.get().severity() == Severity.CRITICAL) {
            return headroom;
        }
        Optional<Finding> trend = trend(run);
        if (trend.isPresent() && (headroom.isEmpty() || trend.get().severity() == Severity.CRITICAL)) {
            return trend;
        }
        if (headroom.isPresent()) {
            return headroom;
        }
        Optional<Finding> bucket = bucket(run);
        return bucket.isPresent() ? bucket : SamplingRisk.evaluate(run, shared);
    }

    /**
     * A trainer that catches a CUDA OOM and skips the batch (ai-toolkit): critical at once, for
     * {@value #CAUGHT_OOM_SECONDS} s after the newest; once the trainer gives up, the failure is {@code run_failed}'s.
     */
    private static Optional<Finding> caughtOoms(RunContext run) {
        long count = run.oomSkips();
        double since = run.now() - run.oomSkipTs();
        if (count <= 0 || !(since <= CAUGHT_OOM_SECONDS) || run.failure() != null) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("oom_skipped_batches", count);
        evidence.put("last_oom_skipped_ts", run.oomSkipTs());
        evidence.put("seconds_since_last_oom_skipped", Math.round(Math.max(0, since)));
        String message = String.format(Locale.ROOT, "the trainer caught %d CUDA OOM%s and skipped %s (the newest %s "
                + "ago): the run is at the edge of its GPU memory", count, count == 1 ? "" : "s",
                count == 1 ? "that batch" : "those batches", Texts.secs(Math.max(0, since)));
        return Optional.of(new Finding(Severity.CRITICAL, message, evidence, memorySuggestion(run))
                .withSustain(Duration.ZERO));
    }

    private Optional<Finding> headroom(RunContext run, boolean active) {
        GpuSeries worst = null;
        double worstRatio = Double.POSITIVE_INFINITY;
        double worstUsed = Double.NaN;
        for (GpuSeries g : run.gpus()) {
            double total = g.memoryTotalBytes();
            double used = WindowStats.latestMemory(g);
            if (!(total > 0) || Double.isNaN(used) || g.size() == 0 || stale(run, g)) {
                continue;
            }
            double ratio = (total - used) / total;
            if (ratio < worstRatio) {
                worstRatio = ratio;
                worst = g;
                worstUsed = used;
            }
        }
        // Clear only above 1.5× the warning share: an allocator wobbling around the line must not flap.
        double limit = active ? s.headroomWarningRatio() * 1.5 : s.headroomWarningRatio();
        if (worst == null || worstRatio >= limit) {
            return Optional.empty();
        }
        double total = worst.memoryTotalBytes();
        Severity severity = worstRatio < s.headroomCriticalRatio() ? Severity.CRITICAL : Severity.WARNING;
        Map<String, Object> evidence = Texts.gpuEvidence(worst);
        evidence.put("memory_used_bytes", (long) worstUsed);
        evidence.put("memory_total_bytes", (long) total);
        evidence.put("headroom_bytes", (long) (total - worstUsed));
        evidence.put("headroom_ratio", Texts.round(worstRatio, 4));
        Estimate e = run.estimate();
        if (e != null) {
            evidence.put("predicted_peak_memory_bytes", e.peakMemoryBytes());
        }
        String message = String.format(Locale.ROOT, "%s has %s free of %s (%s)", Texts.gpuName(worst),
                Texts.gib(total - worstUsed), Texts.gib(total), Texts.pct(worstRatio));
        String suggestion = memorySuggestion(run);
        List<GpuSeries.OtherProcess> others = worst.otherProcesses().stream()
                .filter(p -> p.usedBytes() >= shared.minBytes()).toList();
        if (!others.isEmpty()) {
            evidence.put("other_processes", SharedGpu.evidence(others));
            message += "; not this run's: " + SharedGpu.describe(others);
            List<GpuSeries.OtherProcess> strangers = SharedGpu.strangers(worst, shared);
            if (!strangers.isEmpty()) {
                suggestion = SharedGpu.fix(worst, strangers) + "; else " + suggestion;
            }
        }
        return Optional.of(new Finding(severity, message, evidence, suggestion));
    }

    private Optional<Finding> trend(RunContext run) {
        double from = run.now() - seconds(s.trendWindow());
        double minSpan = seconds(s.trendMinSpan());
        GpuSeries worst = null;
        WindowStats.Trend worstTrend = null;
        double worstSeconds = Double.POSITIVE_INFINITY;
        for (GpuSeries g : run.gpus()) {
            double total = g.memoryTotalBytes();
            if (!(total > 0) || stale(run, g)) {
                continue;
            }
            if (s.trendMinSlopeBytesPerSecond() > 0 && g.memoryStillFrom() <= g.firstIndexAtOrAfter(from)) {
                continue; // the same memory in use at every reading of the window (as a caching allocator holds it)
            }
            WindowStats.Trend t = WindowStats.memoryTrend(g, from);
            if (t == null || t.spanSeconds() < minSpan || t.slopePerSecond() < s.trendMinSlopeBytesPerSecond()
                    || t.r2() < s.trendMinR2()) {
                continue;
            }
            // A steady ramp grows in both halves of the span; a climb to a plateau or a single jump does not.
            double mid = t.lastTs() - t.spanSeconds() / 2;
            WindowStats.Trend early = WindowStats.memoryTrend(g, t.lastTs() - t.spanSeconds(), mid);
            WindowStats.Trend late = WindowStats.memoryTrend(g, mid, Double.POSITIVE_INFINITY);
            if (early == null || late == null || early.slopePerSecond() < s.trendMinSlopeBytesPerSecond()
                    || late.slopePerSecond() < s.trendMinSlopeBytesPerSecond()
                    || late.slopePerSecond() < 0.5 * early.slopePerSecond()) {
                continue;
            }
            // Growth now: once memory levels off, the fitted line runs ahead of the readings. The newest must stay
            // within the fit's scatter (or ten seconds of growth) below it.
            double fittedNow = t.intercept() + t.slopePerSecond() * t.lastTs();
            double tolerance = Math.max(10 * t.slopePerSecond(), 3 * residualStd(g, from, t));
            if (t.lastValue() < fittedNow - tolerance) {
                continue;
            }
            // And still growing over the last half minute (a plateau reached 40 s ago is no trend).
            WindowStats.Trend recent = WindowStats.memoryTrend(g, t.lastTs() - RECENT_SECONDS);
            if (recent != null && recent.slopePerSecond() < Math.max(s.trendMinSlopeBytesPerSecond(),
                    0.25 * t.slopePerSecond())) {
                continue;
            }
            // Time to full from the newest reading, never the fit's overshoot (never "full in 0 s").
            double seconds = (total - t.lastValue()) / t.slopePerSecond();
            if (!(seconds > 0)) {
                continue;
            }
            if (seconds < worstSeconds) {
                worstSeconds = seconds;
                worst = g;
                worstTrend = t;
            }
        }
        if (worst == null || worstSeconds > seconds(s.trendWarningHorizon())) {
            return Optional.empty();
        }
        Severity severity = worstSeconds <= seconds(s.trendCriticalHorizon()) ? Severity.CRITICAL : Severity.WARNING;
        Map<String, Object> evidence = Texts.gpuEvidence(worst);
        evidence.put("memory_used_bytes", (long) worstTrend.lastValue());
        evidence.put("memory_total_bytes", (long) worst.memoryTotalBytes());
        evidence.put("growth_bytes_per_second", Math.round(worstTrend.slopePerSecond()));
        evidence.put("trend_r2", Texts.round(worstTrend.r2(), 3));
        evidence.put("trend_span_seconds", Math.round(worstTrend.spanSeconds()));
        evidence.put("seconds_to_full", Math.round(worstSeconds));
        String message = String.format(Locale.ROOT,
                "memory on %s grows %s/min and reaches its %s in about %s (now %s)", Texts.gpuName(worst),
                Texts.gib(worstTrend.slopePerSecond() * 60), Texts.gib(worst.memoryTotalBytes()),
                Texts.secs(worstSeconds), Texts.gib(worstTrend.lastValue()));
        String suggestion = "memory should be flat after the first steps: look for tensors kept across steps "
                + "(losses or outputs stored without .item()/.detach(), growing caches or lists), and checkpoint "
                + "now; " + memorySuggestion(run);
        return Optional.of(new Finding(severity, message, evidence, suggestion));
    }

    /** Standard deviation of the window's readings around the fitted line. */
    private static double residualStd(GpuSeries g, double fromTs, WindowStats.Trend t) {
        double sum = 0;
        double sumSq = 0;
        int n = 0;
        for (int i = 0; i < g.size(); i++) {
            double y = g.memoryUsedBytes(i);
            if (g.ts(i) < fromTs || Double.isNaN(y)) {
                continue;
            }
            double r = y - (t.intercept() + t.slopePerSecond() * g.ts(i));
            sum += r;
            sumSq += r * r;
            n++;
        }
        if (n < 2) {
            return 0;
        }
        double mean = sum / n;
        return Math.sqrt(Math.max(0, sumSq / n - mean * mean));
    }

    private Optional<Finding> bucket(RunContext run) {
        Estimate e = run.estimate();
        RunSpec spec = run.spec();
        StepSeries steps = run.steps();
        OptionalInt f = run.latentDownsample();
        if (e == null || spec == null || f.isEmpty() || steps.size() == 0) {
            return Optional.empty();
        }
        int bestH = -1;
        int bestW = -1;
        for (int i = 0; i < steps.size(); i++) {
            int h = steps.bucketHeight(i);
            int w = steps.bucketWidth(i);
            if (h > 0 && w > 0 && (long) h * w > (long) bestH * bestW) {
                bestH = h;
                bestW = w;
            }
        }
        if (bestH <= 0) {
            return Optional.empty();
        }
        int heightPx = bestH * f.getAsInt();
        int widthPx = bestW * f.getAsInt();
        long specPixels = spec.height() != null && spec.width() != null ? (long) spec.height() * spec.width()
                : spec.resolution() != null ? (long) spec.resolution() * spec.resolution() : 0;
        if ((long) heightPx * widthPx <= specPixels) {
            return Optional.empty();
        }
        RunSpec variant = spec.overriddenBy(new RunSpec(null, null, null, null, null, heightPx, widthPx, null, null,
                null, null, null, null, null, null, null, null));
        Estimate big = run.whatIf(variant);
        long capacity = capacity(run, e);
        if (big == null || capacity <= 0 || big.peakMemoryBytes() <= capacity) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("bucket_height_px", heightPx);
        evidence.put("bucket_width_px", widthPx);
        evidence.put("bucket_predicted_peak_memory_bytes", big.peakMemoryBytes());
        evidence.put("memory_total_bytes", capacity);
        evidence.put("predicted_peak_memory_bytes", e.peakMemoryBytes());
        String message = String.format(Locale.ROOT,
                "the log shows a %d×%d px bucket; at that size the estimate is %s, above the GPU's %s",
                heightPx, widthPx, Texts.gib(big.peakMemoryBytes()), Texts.gib(capacity));
        String suggestion = big.maxBatch() > 0
                ? String.format(Locale.ROOT, "cap the bucket batch size: at %d×%d px at most %d samples fit per GPU "
                        + "(or drop that aspect-ratio bucket); %s", heightPx, widthPx, big.maxBatch(),
                        memorySuggestion(run))
                : "drop that aspect-ratio bucket or lower the resolution; " + memorySuggestion(run);
        return Optional.of(new Finding(Severity.WARNING, message, evidence, suggestion));
    }

    private static long capacity(RunContext run, Estimate e) {
        OptionalDouble min = run.gpus().stream().mapToDouble(GpuSeries::memoryTotalBytes).filter(m -> m > 0).min();
        return min.isPresent() ? (long) min.getAsDouble() : e.gpuMemoryBytes();
    }

    /** The first memory saving of the estimator's plan that keeps the run's GPUs, else the generic advice. */
    static String memorySuggestion(RunContext run) {
        Estimate e = run.estimate();
        // One diagnosis per run: encoders left on the GPU are freed, not traded for an optimizer that saves less.
        double peak = run.gpus().stream().mapToDouble(g -> WindowStats.maxMemory(g, run.now() - 300))
                .filter(m -> !Double.isNaN(m)).max().orElse(Double.NaN);
        Estimate withEncoders = MemoryAboveEstimateDetector.residentEncoders(run, peak);
        if (withEncoders != null) {
            return run.isActive(AnomalyKind.MEMORY_ABOVE_ESTIMATE)
                    ? "free the encoders left on the GPU (see memory_above_estimate): frees about "
                            + Texts.gib(withEncoders.peakMemoryBytes() - run.estimate().peakMemoryBytes())
                    : MemoryAboveEstimateDetector.residentEncodersFix(run, withEncoders);
        }
        if (e != null && e.suggestions() != null) {
            // The estimator's plan, in its order: what keeps the run's GPUs first.
            Optional<Suggestion> first = e.suggestions().stream().filter(x -> x.savesBytes() > 0 && x.addsGpus() == 0)
                    .findFirst();
            if (first.isPresent()) {
                return Texts.describe(first.get(), e);
            }
        }
        return "lower the per-GPU batch, enable gradient checkpointing, or precompute the text/VAE features";
    }
}
