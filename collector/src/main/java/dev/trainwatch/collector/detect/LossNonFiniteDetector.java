package dev.trainwatch.collector.detect;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** {@code loss_nonfinite}: the run diverged (the report counts and why: docs/DETECTORS.md). */
public final class LossNonFiniteDetector extends BaseDetector {

    static final int RESOLVE_AFTER_FINITE = 3;

    public LossNonFiniteDetector() {
        super(AnomalyKind.LOSS_NONFINITE);
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        LossHealth h = run.loss();
        String precision = run.spec() != null ? run.spec().precision() : null;
        boolean fp16 = precision == null || precision.equals("fp16");
        int gradNeeded = fp16 ? 3 : 2;
        boolean lossBad = h.nonFiniteLossStreak() > 0;
        boolean gradBad = h.nonFiniteGradStreak() >= gradNeeded;
        if (!lossBad && !gradBad) {
            if (active && h.finiteStreak() < RESOLVE_AFTER_FINITE) {
                // Held until three finite reports in a row: one finite loss between NaNs is not a recovery.
                Map<String, Object> evidence = new LinkedHashMap<>();
                evidence.put("finite_reports_since", h.finiteStreak());
                evidence.put("nonfinite_loss_reports", h.nonFiniteLossReports());
                return Optional.of(new Finding(Severity.CRITICAL, "the loss was " + h.nonFiniteValue()
                        + "; " + h.finiteStreak() + " finite report" + (h.finiteStreak() == 1 ? "" : "s")
                        + " since, waiting for " + RESOLVE_AFTER_FINITE + " in a row before calling it recovered",
                        evidence, "if the run did not resume from a checkpoint by itself, stop it and resume from the "
                                + "last one before the divergence with a lower learning rate"));
            }
            return Optional.empty();
        }
        return Optional.of(finding(run, h, lossBad, fp16, precision));
    }

    private static Finding finding(RunContext run, LossHealth h, boolean lossBad, boolean fp16, String precision) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("value", h.nonFiniteValue());
        evidence.put("what", lossBad ? "loss" : "grad_norm");
        if (h.firstNonFiniteStep() >= 0) {
            evidence.put("first_step", h.firstNonFiniteStep());
            evidence.put("first_ts", Texts.round(h.firstNonFiniteTs(), 3));
        }
        evidence.put("reports_in_a_row", lossBad ? h.nonFiniteLossStreak() : h.nonFiniteGradStreak());
        evidence.put("nonfinite_loss_reports", h.nonFiniteLossReports());
        int n = h.finiteCount();
        if (n > 0) {
            evidence.put("last_finite_loss", Texts.round(h.finiteLoss(n - 1), 6));
            evidence.put("last_finite_step", h.finiteStep(n - 1));
        }
        if (precision != null) {
            evidence.put("precision", precision);
        }
        String since = h.firstNonFiniteStep() >= 0 ? " since step " + h.firstNonFiniteStep() : "";
        String last = n > 0 ? String.format(Locale.ROOT, "; the last finite loss was %.4g at step %d",
                h.finiteLoss(n - 1), h.finiteStep(n - 1)) : "";
        String message = lossBad
                ? "the loss is " + h.nonFiniteValue() + since + " (" + h.nonFiniteLossStreak() + " report"
                        + (h.nonFiniteLossStreak() == 1 ? "" : "s") + " in a row)" + last + ": the run has diverged"
                : "the gradient norm has been " + h.nonFiniteValue() + " for " + h.nonFiniteGradStreak()
                        + " reports in a row" + since + last + (fp16
                        ? ": fp16's loss scaler keeps overflowing, the optimizer is skipping steps"
                        : ": the weights are about to become NaN");
        String suggestion = "stop the run and resume from the last checkpoint before step "
                + (h.firstNonFiniteStep() >= 0 ? h.firstNonFiniteStep() : "the divergence")
                + " with a lower learning rate or a longer warm-up and gradient clipping"
                + (fp16 ? "; train in bf16 instead of fp16 if the GPU has it (fp16 overflows where bf16 does not)" : "")
                + "; look at the batches just before it for corrupt samples (black or empty images, empty captions)";
        return new Finding(Severity.CRITICAL, message, evidence, suggestion);
    }
}
