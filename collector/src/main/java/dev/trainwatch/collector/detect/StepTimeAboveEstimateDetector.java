package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.Stats.nz;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * {@code step_time_above_estimate}: the median observed step time over the window is well above the estimator's.
 * The message ranks the likely causes by the evidence for each: a PCIe-bound step ({@link PcieBoundStep}, first when
 * it holds), online encoders (data wait, spec), TF32 off, math attention, throttled clocks, a straggling rank.
 */
public final class StepTimeAboveEstimateDetector extends BaseDetector {

    private final DetectorSettings.StepTimeAboveEstimate s;
    private final DetectorSettings.Throttling throttling;
    private final DetectorSettings.PcieBound pcie;

    public StepTimeAboveEstimateDetector(DetectorSettings settings) {
        super(AnomalyKind.STEP_TIME_ABOVE_ESTIMATE);
        this.s = settings.stepTimeAboveEstimate();
        this.throttling = settings.throttling();
        this.pcie = settings.pcieBound();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        Estimate e = run.estimate();
        if (e == null || !(e.stepSeconds() > 0)) {
            return Optional.empty();
        }
        double from = run.now() - seconds(s.window());
        StepSeries steps = run.steps();
        int reports = WindowStats.reports(steps, from);
        if (reports < s.minStepReports()) {
            return Optional.empty();
        }
        double observed = WindowStats.medianStepSeconds(steps, from);
        double ratio = observed / e.stepSeconds();
        if (!(ratio > (active ? s.clearRatio() : s.warningRatio()))) {
            return Optional.empty();
        }
        Severity severity = ratio > s.criticalRatio() ? Severity.CRITICAL : Severity.WARNING;
        List<Cause> causes = causes(run, e, from);
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("observed_step_seconds", Texts.round(observed, 3));
        evidence.put("predicted_step_seconds", Texts.round(e.stepSeconds(), 3));
        evidence.put("step_time_ratio", Texts.round(ratio, 2));
        evidence.put("step_reports", reports);
        for (Cause c : causes) {
            evidence.putAll(c.evidence);
        }
        String message = String.format(Locale.ROOT, "steps take %s where %s is expected (%s slower)",
                Texts.secs(observed), Texts.secs(e.stepSeconds()), Texts.times(ratio));
        if (!causes.isEmpty()) {
            message += "; likely causes: " + String.join(", ", causes.stream().map(c -> c.name).toList());
        }
        String suggestion = causes.isEmpty()
                ? "compare the run's settings with the spec registered for it (batch, resolution, precision, "
                        + "attention, features); a spec that does not match the run makes the estimate wrong"
                : String.join("; ", causes.stream().map(c -> c.fix).limit(3).toList());
        return Optional.of(new Finding(severity, message, evidence, suggestion));
    }

    private record Cause(String name, double score, String fix, Map<String, Object> evidence) {
    }

    private List<Cause> causes(RunContext run, Estimate e, double from) {
        List<Cause> out = new ArrayList<>();
        // Copies the compute waits on explain the whole step when they hold: first, whatever else scores.
        PcieBoundStep.of(run, e, from, pcie).ifPresent(p -> out.add(new Cause(p.name(), 2, p.fix(), p.evidence())));
        RunSpec spec = run.spec();
        StepSeries steps = run.steps();
        double dataShare = WindowStats.stepShare(steps, run.ranks(), from, WindowStats.StepPart.DATA);
        double lm = WindowStats.stepShare(steps, run.ranks(), from, WindowStats.StepPart.TEXT_ENCODER);
        double vae = WindowStats.stepShare(steps, run.ranks(), from, WindowStats.StepPart.VAE);
        double waiting = nz(dataShare) + nz(lm) + nz(vae);
        boolean online = spec != null && "online".equalsIgnoreCase(spec.features());
        // With features online the prediction already prices the encoders: they explain the gap only when the run
        // waits clearly longer than predicted for its inputs.
        double predictedWait = 0;
        if (online && e.stepBreakdown() != null && e.stepSeconds() > 0) {
            predictedWait = (e.stepBreakdown().getOrDefault("text_encoder", 0.0)
                    + e.stepBreakdown().getOrDefault("vae_encoder", 0.0)) / e.stepSeconds();
        }
        double observedStep = WindowStats.medianStepSeconds(steps, from);
        if (waiting > predictedWait + 0.15) {
            // One story per run: when data_starvation tells it, this anomaly points there instead of repeating it.
            String fix = run.wasRaised(AnomalyKind.DATA_STARVATION)
                    ? "see data_starvation: the run waits for its input, and its fix is there"
                    : online
                    ? (Double.isNaN(lm) && Double.isNaN(vae)
                            ? Texts.precomputeFromObserved(run, observedStep, waiting, Double.NaN, true)
                            : Texts.precomputeFromObserved(run, observedStep, nz(lm) + nz(vae), dataShare, false))
                    : "make the data loader faster (more workers, pinned memory, local storage)";
            Map<String, Object> ev = new LinkedHashMap<>();
            ev.put("data_wait_ratio", Texts.round(waiting, 3));
            if (online) {
                ev.put("predicted_encoder_ratio", Texts.round(predictedWait, 3));
            }
            String name = online ? "input and online encoding slower than predicted" : "data loading";
            out.add(new Cause(name, waiting - predictedWait, fix, ev));
        }
        if (spec != null && "fp32".equalsIgnoreCase(spec.precision())) {
            String fix = Texts.suggestion(e, "tf32").or(() -> Texts.suggestion(e, "mixed precision"))
                    .map(x -> Texts.describe(x, e))
                    .orElse("enable TF32 (torch.backends.cuda.matmul.allow_tf32 = True) or bf16 mixed precision");
            out.add(new Cause("fp32 matmuls without TF32", 0.45, fix, Map.of()));
        }
        if (spec != null && "math".equalsIgnoreCase(spec.attention())) {
            out.add(new Cause("math attention", 0.4, "use fused attention (torch SDPA or flash-attn) instead of "
                    + "the math implementation", Map.of()));
        }
        double throttled = throttledShare(run, from);
        if (throttled > 0.1) {
            out.add(new Cause("throttled clocks", throttled, "cool or power the throttled GPUs (see throttling)",
                    Map.of("throttled_sample_ratio", Texts.round(throttled, 2))));
        }
        double spread = rankSpread(run.ranks(), from);
        if (spread > 1.1) {
            out.add(new Cause("a straggling rank", Math.min(1, spread - 1), "find the slow rank (see straggler)",
                    Map.of("slowest_rank_ratio", Texts.round(spread, 2))));
        }
        out.sort(Comparator.comparingDouble(Cause::score).reversed());
        return out;
    }

    private double throttledShare(RunContext run, double from) {
        int busy = 0;
        int throttled = 0;
        int mask = GpuSeries.reasonMask(throttling.reasons());
        for (GpuSeries g : run.gpus()) {
            int[] c = StragglerDetector.busyWithReasons(g, from, mask);
            busy += c[0];
            throttled += c[1];
        }
        return busy == 0 ? 0 : (double) throttled / busy;
    }

    /** Slowest rank's mean step time over the median of the ranks' means (1 when ranks are not reported). */
    static double rankSpread(RankSeries ranks, double from) {
        double[] means = IntStream.range(0, ranks.count())
                .mapToDouble(k -> WindowStats.meanStepSeconds(ranks.steps(k), from)).filter(m -> !Double.isNaN(m))
                .toArray();
        if (means.length < 2) {
            return 1;
        }
        double max = Arrays.stream(means).max().orElse(0);
        double median = Stats.median(means);
        return median > 0 ? max / median : 1;
    }
}
