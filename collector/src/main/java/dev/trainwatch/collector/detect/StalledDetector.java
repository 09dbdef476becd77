package dev.trainwatch.collector.detect;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code stalled}: no step report for many expected report gaps (a log printed every 20 steps reports every 20
 * step times). Warning at the threshold, critical at twice it; resolved by the next step.
 */
public final class StalledDetector implements Detector {

    private final DetectorSettings.Stalled s;

    public StalledDetector(DetectorSettings settings) {
        this.s = settings.stalled();
    }

    @Override
    public AnomalyKind kind() {
        return AnomalyKind.STALLED;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        StepSeries steps = run.steps();
        int n = steps.size();
        if (n == 0) {
            return Optional.empty();
        }
        double lastTs = steps.ts(n - 1);
        double silence = run.now() - lastTs;
        double gap = WindowStats.expectedReportGapSeconds(steps);
        double threshold = Math.max(s.minSilence().toMillis() / 1000.0, s.reportGapMultiple() * gap);
        if (!(silence >= threshold)) {
            return Optional.empty();
        }
        Severity severity = silence >= 2 * threshold ? Severity.CRITICAL : Severity.WARNING;
        long lastStep = steps.step(n - 1);
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("last_step", lastStep);
        evidence.put("last_step_ts", lastTs);
        evidence.put("seconds_since_last_step", Math.round(silence));
        evidence.put("expected_report_gap_seconds", Texts.round(gap, 2));
        evidence.put("threshold_seconds", Math.round(threshold));
        double busy = Double.NaN;
        int gpus = 0;
        double utilSum = 0;
        for (GpuSeries g : run.gpus()) {
            double u = WindowStats.meanUtilization(g, run.now() - 60);
            if (!Double.isNaN(u)) {
                utilSum += u;
                gpus++;
            }
        }
        if (gpus > 0) {
            busy = utilSum / gpus;
            evidence.put("gpu_utilization_ratio", Texts.round(busy, 3));
        }
        String message = String.format(Locale.ROOT, "no step since step %d, %s ago (a report is expected every %s)",
                lastStep, Texts.secs(silence), Texts.secs(gap));
        String suggestion;
        if (!Double.isNaN(busy) && busy < 0.05) {
            message += "; the GPUs are idle";
            suggestion = "the processes are alive but not computing: dump their stacks (py-spy dump --pid PID); a "
                    + "hang in a collective usually means one rank died or is stuck (NCCL_DEBUG=INFO, "
                    + "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and a finite timeout make it fail instead of hang)";
        } else if (!Double.isNaN(busy)) {
            message += String.format(Locale.ROOT, "; the GPUs are %s busy", Texts.pct(busy));
            suggestion = "the GPUs still compute: an evaluation, checkpoint or sampling phase may be running; if "
                    + "not, dump the stacks (py-spy dump --pid PID) and check the log output is not buffered";
        } else {
            suggestion = "check the training process and its log (is it alive? is the log file still written?)";
        }
        return Optional.of(new Finding(severity, message, evidence, suggestion));
    }
}
