package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gpu_underutilized}: the run's GPUs busy less than half the time (SMs at work where GPM counters exist), or
 * well under half their memory used while a much larger batch fits. Defers to {@code gpu_idle} and to
 * {@code data_starvation} (one diagnosis per run); docs/DETECTORS.md has the thresholds.
 */
public final class GpuUnderutilizedDetector extends BaseDetector {

    private final DetectorSettings.GpuUnderutilized s;

    public GpuUnderutilizedDetector(DetectorSettings settings) {
        super(AnomalyKind.GPU_UNDERUTILIZED);
        this.s = settings.gpuUnderutilized();
    }

    /** Observed peak at least this share of the predicted peak: the spec's batch is the run's batch. */
    static final double SPEC_MEMORY_AGREEMENT = 0.7;

    /**
     * One pass over the entries from {@code first} (the window is read once, not once per figure): {@code [0]} the
     * mean utilisation of the entries that have one (NaN if none), {@code [1..3]} the mean SM activity, utilisation
     * and tensor activity of the entries that have SM activity (NaN when fewer than half the entries do: a GPU
     * without counters, or counters only just started), {@code [4]} the highest memory in use (NaN if none).
     */
    private static double[] scan(GpuSeries g, int first) {
        double utilSum = 0;
        int utilN = 0;
        double sm = 0;
        double util = 0;
        double tensor = 0;
        int n = 0;
        double maxMemory = Double.NaN;
        int size = g.size();
        for (int i = first; i < size; i++) {
            double u = g.reading(Reading.UTILIZATION, i);
            if (!Double.isNaN(u)) {
                utilSum += u;
                utilN++;
                double a = g.reading(Reading.SM_ACTIVE, i);
                if (!Double.isNaN(a)) {
                    sm += a;
                    util += u;
                    double t = g.reading(Reading.TENSOR_ACTIVE, i);
                    tensor += Double.isNaN(t) ? 0 : t;
                    n++;
                }
            }
            double m = g.memoryUsedBytes(i);
            if (!Double.isNaN(m) && (Double.isNaN(maxMemory) || m > maxMemory)) {
                maxMemory = m;
            }
        }
        boolean counted = n > 0 && n * 2 >= size - first;
        return new double[] {utilN > 0 ? utilSum / utilN : Double.NaN, counted ? sm / n : Double.NaN,
                counted ? util / n : Double.NaN, counted ? tensor / n : Double.NaN, maxMemory};
    }

    /** Every 10 s: its means are over 10 minutes, raised after 2 and cleared after 5 (docs/PERFORMANCE.md). */
    @Override
    public double everySeconds() {
        return 10;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        if (run.isActive(AnomalyKind.GPU_IDLE) || StallPhase.beforeFirstStep(run)) {
            return Optional.empty();
        }
        Usage usage = usage(run);
        if (usage.gpus == 0) {
            return Optional.empty();
        }
        int n = usage.gpus;
        double util = usage.utilSum / n;
        Estimate e = run.estimate();
        RunSpec spec = run.spec();
        Integer batch = spec != null ? spec.batch() : null;
        // batch advice only where the observed memory is near the spec's prediction (its batch is the run's)
        boolean specDescribesRun = e == null || Double.isNaN(usage.capacity)
                || usage.peakShare * usage.capacity >= SPEC_MEMORY_AGREEMENT * e.peakMemoryBytes();
        boolean biggerBatchFits = e != null && batch != null && specDescribesRun
                && e.maxBatch() >= batch * s.batchGainFactor();
        boolean bySm = usage.counted * 2 > n;
        boolean starved = run.isActive(AnomalyKind.DATA_STARVATION);
        boolean lowUtil = util < (active ? s.utilizationClearRatio() : s.utilizationRaiseRatio()) && !starved;
        boolean lowMemory = !starved && biggerBatchFits && usage.peakShare > 0
                && usage.peakShare < (active ? s.memoryShareRaise() * 1.1 : s.memoryShareRaise());
        if (!lowUtil && !lowMemory) {
            return Optional.empty();
        }
        Map<String, Object> evidence = evidence(usage, bySm, biggerBatchFits ? batch : null, e);
        String batchAdvice = biggerBatchFits
                ? String.format(Locale.ROOT, "raise the per-GPU batch from %d towards %d (the estimator says %d "
                        + "fits in %s) and scale the learning rate accordingly", batch, e.maxBatch(), e.maxBatch(),
                        Texts.gib(e.gpuMemoryBytes()))
                : null;
        return Optional.of(finding(usage, lowUtil, bySm, batchAdvice, batch, e, evidence));
    }

    /** What the run's GPUs did over the window: utilisation, SM and tensor activity, memory. */
    private static final class Usage {
        double utilSum;
        int gpus;
        double rawUtilSum;
        double tensorSum;
        int counted;
        double peakShare;
        double capacity = Double.NaN;
    }

    private Usage usage(RunContext run) {
        double from = run.now() - seconds(s.window());
        StepSeries steps = run.steps();
        double took = steps.size() > 0 ? steps.timeS(0) * steps.intervalSteps(0) : Double.NaN;
        double trainingFrom = steps.size() > 0 ? steps.ts(0) - (Double.isNaN(took) ? 0 : took) : Double.NaN;
        double coverage = seconds(s.minCoverage());
        Usage usage = new Usage();
        for (GpuSeries g : run.gpus()) {
            int first = g.firstIndexAtOrAfter(from);
            if (first < g.size() && trainingFrom - g.ts(first) > coverage) {
                first = g.firstIndexAtOrAfter(trainingFrom); // a long start-up (caching on the CPU) is not training
            }
            if (first >= g.size() || stale(run, g) || g.ts(g.size() - 1) - g.ts(first) < coverage) {
                continue;
            }
            double[] entries = scan(g, first);
            double u = entries[0];
            if (!Double.isNaN(entries[1])) {
                // SMs at work, not "a kernel ran"; utilisation of the same entries, for the message
                usage.utilSum += entries[1];
                usage.rawUtilSum += entries[2];
                usage.tensorSum += entries[3];
                usage.counted++;
                usage.gpus++;
            } else if (!Double.isNaN(u)) {
                usage.utilSum += u;
                usage.rawUtilSum += u;
                usage.gpus++;
            }
            double m = entries[4];
            if (g.memoryTotalBytes() > 0 && !Double.isNaN(m)) {
                usage.peakShare = Math.max(usage.peakShare, m / g.memoryTotalBytes());
                usage.capacity = g.memoryTotalBytes();
            }
        }
        return usage;
    }

    private static Map<String, Object> evidence(Usage usage, boolean bySm, Integer batch, Estimate e) {
        int n = usage.gpus;
        double util = usage.utilSum / n;
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("mean_utilization_ratio", Texts.round(bySm ? usage.rawUtilSum / n : util, 3));
        if (usage.counted > 0) {
            evidence.put("mean_sm_active_ratio", Texts.round(util, 3));
            evidence.put("mean_tensor_active_ratio", Texts.round(usage.tensorSum / usage.counted, 3));
        }
        evidence.put("peak_memory_share", Texts.round(usage.peakShare, 3));
        evidence.put("gpus", n);
        if (batch != null) {
            evidence.put("batch", batch);
            evidence.put("max_batch", e.maxBatch());
        }
        return evidence;
    }

    private Finding finding(Usage usage, boolean lowUtil, boolean bySm, String batchAdvice, Integer batch,
            Estimate e, Map<String, Object> evidence) {
        int n = usage.gpus;
        double util = usage.utilSum / n;
        String message;
        String suggestion;
        if (lowUtil && bySm) {
            message = String.format(Locale.ROOT, "the run's %d GPU%s kept %s of their SMs at work over the last %s "
                    + "(utilisation reads %s: kernels ran, but few SMs were busy)", n, n == 1 ? "" : "s",
                    Texts.pct(util), Texts.secs(seconds(s.window())), Texts.pct(usage.rawUtilSum / n));
            suggestion = (batchAdvice != null ? batchAdvice + "; " : "")
                    + "the kernels are too small to fill the GPU: a larger batch, torch.compile or CUDA graphs "
                    + "(fewer, larger kernels), and fewer host synchronisations (.item(), logging every step)";
        } else if (lowUtil) {
            message = String.format(Locale.ROOT, "the run's %d GPU%s were busy %s of the time over the last %s", n,
                    n == 1 ? "" : "s", Texts.pct(util), Texts.secs(seconds(s.window())));
            suggestion = (batchAdvice != null ? batchAdvice + "; " : "")
                    + "check the input pipeline and host CPU (workers, augmentation), synchronisations "
                    + "(.item(), logging every step) and small kernels (torch.compile, larger batch)";
        } else {
            message = String.format(Locale.ROOT, "the run uses at most %s of %s on its GPUs while batch %d of up "
                    + "to %d would fit", Texts.pct(usage.peakShare), Texts.gib(usage.capacity), batch, e.maxBatch());
            suggestion = batchAdvice;
        }
        return new Finding(Severity.WARNING, message, evidence, suggestion);
    }
}
