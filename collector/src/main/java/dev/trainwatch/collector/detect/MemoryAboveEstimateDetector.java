package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code memory_above_estimate}: the run's peak over the window is well above the predicted peak. When the spec
 * says the features are precomputed but the observed peak matches the estimate with online features, the
 * message says an encoder is resident on the GPU. Memory that processes not of the run hold is not the run's: when
 * it is what puts the GPU above the estimate, the message names them ({@link SharedGpu}), and another watched run's
 * share of a GPU is never counted against this one.
 */
public final class MemoryAboveEstimateDetector extends BaseDetector {

    private final DetectorSettings.MemoryAboveEstimate s;
    private final DetectorSettings.SharedGpu shared;

    public MemoryAboveEstimateDetector(DetectorSettings settings) {
        super(AnomalyKind.MEMORY_ABOVE_ESTIMATE);
        this.s = settings.memoryAboveEstimate();
        this.shared = settings.sharedGpu();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        Estimate e = run.estimate();
        if (e == null || e.peakMemoryBytes() <= 0) {
            return Optional.empty();
        }
        double from = run.now() - 600;
        GpuSeries worst = null;
        double peak = Double.NaN;
        for (GpuSeries g : fresh(run)) {
            // Watched runs sharing the GPU by design are theirs; strangers are named below.
            double m = WindowStats.maxMemory(g, from)
                    - SharedGpu.bytes(g.otherProcesses().stream().filter(p -> p.runId() != null).toList());
            if (!Double.isNaN(m) && (Double.isNaN(peak) || m > peak)) {
                peak = m;
                worst = g;
            }
        }
        if (worst == null) {
            return Optional.empty();
        }
        double predicted = e.peakMemoryBytes();
        double ratio = peak / predicted;
        double excess = peak - predicted;
        double needed = active ? s.clearRatio() : s.raiseRatio();
        if (ratio <= needed || excess < (active ? s.minExcessBytes() / 2.0 : s.minExcessBytes())) {
            return Optional.empty();
        }
        List<GpuSeries.OtherProcess> strangers = SharedGpu.strangers(worst, shared);
        double own = peak - SharedGpu.bytes(strangers);
        if (own / predicted <= needed || own - predicted < s.minExcessBytes()) {
            // The run itself is near its estimate (so strangers there are): their memory is what is above it.
            Map<String, Object> evidence = evidence(worst, peak, e, ratio, excess);
            evidence.put("other_processes", SharedGpu.evidence(strangers));
            evidence.put("run_peak_memory_bytes", Math.round(own));
            String message = String.format(Locale.ROOT, "%s holds %s where %s is predicted for the run: %s of it is "
                    + "not this run's (%s)", Texts.gpuName(worst), Texts.gib(peak), Texts.gib(predicted),
                    Texts.gib(SharedGpu.bytes(strangers)), SharedGpu.describe(strangers));
            return Optional.of(new Finding(Severity.WARNING, message, evidence, SharedGpu.fix(worst, strangers)
                    + "; the run then has the memory the estimate gives it"));
        }
        Finding f = finding(run, worst, peak, e, ratio, excess);
        if (!strangers.isEmpty()) {
            Map<String, Object> evidence = new LinkedHashMap<>(f.evidence());
            evidence.put("other_processes", SharedGpu.evidence(strangers));
            f = new Finding(f.severity(), f.message() + "; not this run's: " + SharedGpu.describe(strangers),
                    evidence, SharedGpu.fix(worst, strangers) + "; " + f.suggestion());
        }
        return Optional.of(f);
    }

    private static Map<String, Object> evidence(GpuSeries worst, double peak, Estimate e, double ratio,
                                                double excess) {
        Map<String, Object> evidence = Texts.gpuEvidence(worst);
        evidence.put("peak_memory_bytes", (long) peak);
        evidence.put("predicted_peak_memory_bytes", e.peakMemoryBytes());
        evidence.put("memory_ratio", Texts.round(ratio, 3));
        evidence.put("excess_bytes", (long) excess);
        return evidence;
    }

    private static Finding finding(RunContext run, GpuSeries worst, double peak, Estimate e, double ratio,
                                   double excess) {
        double predicted = e.peakMemoryBytes();
        Map<String, Object> evidence = evidence(worst, peak, e, ratio, excess);
        String message = String.format(Locale.ROOT, "%s peaks at %s where %s is predicted (%s more, %s)",
                Texts.gpuName(worst), Texts.gib(peak), Texts.gib(predicted), Texts.gib(excess), Texts.times(ratio));
        String suggestion = "check for other processes on the GPU, a batch or resolution larger than the spec says, "
                + "or allocator fragmentation (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True); register the "
                + "spec the run really uses so the comparison is meaningful";
        Estimate withEncoders = residentEncoders(run, peak);
        if (withEncoders != null) {
            evidence.put("predicted_peak_with_online_features_bytes", withEncoders.peakMemoryBytes());
            message += String.format(Locale.ROOT, "; that matches the estimate with online features (%s): "
                    + "the text encoder or VAE seems resident on the GPU though the spec says precomputed",
                    Texts.gib(withEncoders.peakMemoryBytes()));
            suggestion = residentEncodersFix(run, withEncoders);
        }
        return new Finding(Severity.WARNING, message, evidence, suggestion);
    }

    /**
     * The estimate with online features when the spec says precomputed and the observed peak matches that estimate
     * (within 15 %) instead: the encoders stay on the GPU. Null otherwise.
     */
    static Estimate residentEncoders(RunContext run, double peak) {
        RunSpec spec = run.spec();
        Estimate e = run.estimate();
        if (e == null || spec == null || !"precomputed".equalsIgnoreCase(spec.features()) || Double.isNaN(peak)) {
            return null;
        }
        RunSpec online = spec.overriddenBy(new RunSpec(null, null, null, null, null, null, null, null, null,
                null, null, null, "online", null, null, null, null));
        Estimate withEncoders = run.whatIf(online);
        return withEncoders != null && withEncoders.peakMemoryBytes() > e.peakMemoryBytes()
                && Math.abs(peak - withEncoders.peakMemoryBytes()) <= 0.15 * withEncoders.peakMemoryBytes()
                ? withEncoders : null;
    }

    /** The fix for encoders left on the GPU, naming the model's own encoders; oom_risk says the same. */
    static String residentEncodersFix(RunContext run, Estimate withEncoders) {
        String encoders = Texts.encoders(withEncoders).orElse("text encoder and VAE");
        return String.format(Locale.ROOT, "do not load the %s encoders on the GPU when features are precomputed (or "
                + "move them to CPU and free them: del encoder; torch.cuda.empty_cache()): frees about %s", encoders,
                Texts.gib(withEncoders.peakMemoryBytes() - run.estimate().peakMemoryBytes()));
    }
}
