package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code spec_mismatch}: the FLOP model's hardware utilisation and the tensor pipes' busy share disagree, so the run
 * spec does not describe the run (docs/DETECTORS.md says why the thresholds below).
 */
public final class SpecMismatchDetector extends BaseDetector {

    static final double WINDOW_SECONDS = 300;
    static final int MIN_STEP_REPORTS = 5;
    /** The FLOP model over the tensor pipes: above {@code OVER} the spec claims more work than was done. */
    static final double OVER = 1.35;
    static final double UNDER = 0.5;
    /** On Hopper, where runs use a small share of the peak, a factor of two can be a few points. */
    static final double MIN_GAP = 0.03;
    static final double OVER_CLEAR = 1.25;
    static final double UNDER_CLEAR = 0.6;

    public SpecMismatchDetector() {
        super(AnomalyKind.SPEC_MISMATCH);
    }

    /** Mean tensor activity of the entries in [from, to]; NaN when fewer than half of them have it. */
    private static double meanTensor(GpuSeries g, double from, double to) {
        double sum = 0;
        int n = 0;
        int entries = 0;
        for (int i = g.firstIndexAtOrAfter(from); i < g.size() && g.ts(i) <= to; i++) {
            entries++;
            double t = g.reading(Reading.TENSOR_ACTIVE, i);
            if (!Double.isNaN(t)) {
                sum += t;
                n++;
            }
        }
        return n == 0 || n * 2 < entries ? Double.NaN : sum / n;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        Estimate e = run.estimate();
        RunSpec spec = run.spec();
        if (e == null || e.flops() == null || spec == null || spec.batch() == null) {
            return Optional.empty();
        }
        double from = run.now() - WINDOW_SECONDS;
        StepSeries steps = run.steps();
        if (WindowStats.reports(steps, from) < MIN_STEP_REPORTS || run.announcedPhase() != null) {
            return Optional.empty(); // too few steps to rate, or an evaluation/checkpoint the log announced
        }
        // Training time only: from the first report of the window to the newest, and the newest must be recent (an
        // unannounced pause or evaluation leaves the counters of other work).
        double gap = steps.expectedReportGapSeconds();
        int firstReport = steps.firstIndexAtOrAfter(from);
        double spanFrom = steps.ts(firstReport) - (Double.isNaN(gap) ? 0 : gap);
        double spanTo = steps.ts(steps.size() - 1);
        if (run.now() - spanTo > Math.max(60, 3 * (Double.isNaN(gap) ? 20 : gap))
                || spanTo - spanFrom < WINDOW_SECONDS / 2) {
            return Optional.empty();
        }
        double[] tensors = fresh(run).stream().mapToDouble(g -> meanTensor(g, Math.max(from, spanFrom), spanTo))
                .filter(t -> !Double.isNaN(t)).toArray();
        int n = tensors.length;
        if (n == 0) {
            return Optional.empty();
        }
        double tensor = Arrays.stream(tensors).reduce(0, Double::sum) / n;
        int dataParallel = spec.gpus() != null ? spec.gpus() : Math.max(1, run.gpus().size());
        double stepSeconds = WindowStats.medianStepSeconds(steps, from);
        double samplesPerSecond = stepSeconds > 0 ? (double) spec.batch() * dataParallel / stepSeconds : Double.NaN;
        double hfu = e.flops().hardwareUtilization(samplesPerSecond, dataParallel);
        if (Double.isNaN(hfu) || !(tensor > 0 || hfu > 0)) {
            return Optional.empty();
        }
        double ratio = tensor > 0 ? hfu / tensor : Double.POSITIVE_INFINITY;
        boolean over = ratio > (active ? OVER_CLEAR : OVER);
        boolean under = ratio < (active ? UNDER_CLEAR : UNDER);
        if (!(over || under) || Math.abs(hfu - tensor) < (active ? MIN_GAP / 2 : MIN_GAP)) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("hardware_mfu_ratio", Texts.round(tensor, 3));
        evidence.put("model_hfu_ratio", Texts.round(hfu, 3));
        evidence.put("model_mfu_ratio", Texts.round(e.flops().modelUtilization(samplesPerSecond, dataParallel), 3));
        evidence.put("dtype", e.flops().dtype());
        evidence.put("gpus", n);
        String message = String.format(Locale.ROOT, "the spec's FLOPs say the GPUs run at %s of their %s tensor peak%s, "
                + "but their tensor pipes were busy %s of the time: %s", Texts.pct(hfu), e.flops().dtype(),
                hfu > 1 ? " (more than the GPUs can do)" : "",
                Texts.pct(tensor), over
                        ? "the spec describes a larger job than the one running"
                        : "the run does more work per sample than the spec describes");
        String suggestion = "check the run spec against the training config (model, per-GPU batch, resolution, frames, "
                + "precision, gradient checkpointing) and register it again (PUT /v1/runs/" + run.runId() + "); the "
                + "estimates, MFU and step-time comparison of this run use the spec until then";
        return Optional.of(new Finding(Severity.WARNING, message, evidence, suggestion));
    }
}
