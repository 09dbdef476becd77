package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gpu_underutilized}: over the window the run's GPUs are busy less than half the time, or use well under
 * half their memory while the estimator says a much larger batch fits (then it suggests that batch). Defers to
 * {@code gpu_idle} (idle is the stronger statement) and, on both routes, to {@code data_starvation} (which names the
 * cause: one diagnosis per run).
 */
public final class GpuUnderutilizedDetector implements Detector {

    private final DetectorSettings.GpuUnderutilized s;

    public GpuUnderutilizedDetector(DetectorSettings settings) {
        this.s = settings.gpuUnderutilized();
    }

    /** Observed peak at least this share of the predicted peak: the spec's batch is the run's batch. */
    static final double SPEC_MEMORY_AGREEMENT = 0.7;

    @Override
    public AnomalyKind kind() {
        return AnomalyKind.GPU_UNDERUTILIZED;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        if (run.isActive(AnomalyKind.GPU_IDLE)) {
            return Optional.empty();
        }
        double now = run.now();
        double from = now - s.window().toMillis() / 1000.0;
        double coverage = s.minCoverage().toMillis() / 1000.0;
        double utilSum = 0;
        int n = 0;
        double peakShare = 0;
        double capacity = Double.NaN;
        for (GpuSeries g : run.gpus()) {
            int first = g.firstIndexAtOrAfter(from);
            if (first >= g.size() || OomRiskDetector.stale(run, g) || g.ts(g.size() - 1) - g.ts(first) < coverage) {
                continue;
            }
            double u = WindowStats.meanUtilization(g, from);
            if (!Double.isNaN(u)) {
                utilSum += u;
                n++;
            }
            double m = WindowStats.maxMemory(g, from);
            if (g.memoryTotalBytes() > 0 && !Double.isNaN(m)) {
                peakShare = Math.max(peakShare, m / g.memoryTotalBytes());
                capacity = g.memoryTotalBytes();
            }
        }
        if (n == 0) {
            return Optional.empty();
        }
        double util = utilSum / n;
        Estimate e = run.estimate();
        RunSpec spec = run.spec();
        Integer batch = spec != null ? spec.batch() : null;
        // "batch 12 of up to 50 would fit" is the spec's claim: only when the observed memory is near what that spec
        // predicts does the spec describe the run. A run using far less (a spec that says batch 12 for a run at
        // batch 4) gets no batch advice built on the wrong batch, and the memory route stays quiet.
        boolean specDescribesRun = e == null || Double.isNaN(capacity)
                || peakShare * capacity >= SPEC_MEMORY_AGREEMENT * e.peakMemoryBytes();
        boolean biggerBatchFits = e != null && batch != null && specDescribesRun
                && e.maxBatch() >= batch * s.batchGainFactor();
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("mean_utilization_ratio", Texts.round(util, 3));
        evidence.put("peak_memory_share", Texts.round(peakShare, 3));
        evidence.put("gpus", n);
        if (biggerBatchFits) {
            evidence.put("batch", batch);
            evidence.put("max_batch", e.maxBatch());
        }
        // A run starved for data has one diagnosis, data_starvation: its GPUs are under-used because they wait,
        // and a larger batch would only wait longer per step.
        boolean starved = run.isActive(AnomalyKind.DATA_STARVATION);
        boolean lowUtil = util < (active ? s.utilizationClearRatio() : s.utilizationRaiseRatio()) && !starved;
        boolean lowMemory = !starved && biggerBatchFits && peakShare > 0
                && peakShare < (active ? s.memoryShareRaise() * 1.1 : s.memoryShareRaise());
        if (!lowUtil && !lowMemory) {
            return Optional.empty();
        }
        String batchAdvice = biggerBatchFits
                ? String.format(Locale.ROOT, "raise the per-GPU batch from %d towards %d (the estimator says %d "
                        + "fits in %s) and scale the learning rate accordingly", batch, e.maxBatch(), e.maxBatch(),
                        Texts.gib(e.gpuMemoryBytes()))
                : null;
        String message;
        String suggestion;
        if (lowUtil) {
            message = String.format(Locale.ROOT, "the run's %d GPU%s were busy %s of the time over the last %s", n,
                    n == 1 ? "" : "s", Texts.pct(util), Texts.secs(s.window().toMillis() / 1000.0));
            suggestion = (batchAdvice != null ? batchAdvice + "; " : "")
                    + "check the input pipeline and host CPU (workers, augmentation), synchronisations "
                    + "(.item(), logging every step) and small kernels (torch.compile, larger batch)";
        } else {
            message = String.format(Locale.ROOT, "the run uses at most %s of %s on its GPUs while batch %d of up "
                    + "to %d would fit", Texts.pct(peakShare), Texts.gib(capacity), batch, e.maxBatch());
            suggestion = batchAdvice;
        }
        return Optional.of(new Finding(Severity.WARNING, message, evidence, suggestion));
    }
}
