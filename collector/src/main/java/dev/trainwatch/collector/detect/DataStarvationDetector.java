package dev.trainwatch.collector.detect;

import java.util.Optional;
import java.util.stream.IntStream;

/**
 * {@code data_starvation}: the GPU waits for input. Decides between four kinds of evidence: one rank waiting where the
 * others do not ({@link StarvationRankWait}), the log's wait share in its newest reports ({@link StarvationLogWait}),
 * the newest report confirmed by the GPUs' idle gaps ({@link StarvationGpuConfirmation}) and, without a split in the
 * log, repeated idle gaps while steps are slow ({@link StarvationIdleGaps}).
 */
public final class DataStarvationDetector extends BaseDetector {

    /** Said when the spec left the features to the model's default: the encoding is assumed, not known. */
    static final String DEFAULTS_SAID = " (the spec does not say how the features are made: the model's default,"
            + " online encoding, is assumed)";
    /** How far back the run's own earlier pace is looked for. */
    static final double EARLIER_SECONDS = 1800;

    private final DetectorSettings.DataStarvation s;
    private final StarvationGpuConfirmation confirmation;
    private final StarvationIdleGaps idleGaps;

    public DataStarvationDetector(DetectorSettings settings) {
        super(AnomalyKind.DATA_STARVATION);
        this.s = settings.dataStarvation();
        this.confirmation = new StarvationGpuConfirmation(s.gpuConfirm());
        this.idleGaps = new StarvationIdleGaps(s.idleGaps());
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        double from = run.now() - seconds(s.window());
        int reports = WindowStats.reports(run.steps(), from);
        if (reports < s.minStepReports()) {
            return Optional.empty();
        }
        DetectorSettings.LogWait logWait = s.logWait();
        double span = seconds(logWait.newestSpan());
        StarvationRankWait rank = StarvationRankWait.worst(run.ranks(), from, s.minStepReports(), span);
        if (rank != null && rank.reports().holds(logWait, active) && rank.standsOut(s.rankWait())) {
            return Optional.of(rank.finding(run, logWait).withSustain(s.newestSustain()));
        }
        // Run-wide: the rank that waits most (every rank waits for it at the all-reduce), else the run's reports.
        StarvationLogWait wait = rank != null ? rank.reports()
                : StarvationLogWait.newest(run.steps(), from, s.minStepReports(), span);
        if (wait == null) {
            return idleGaps.evaluate(run, from, active, reports);
        }
        if (wait.holds(logWait, active)) {
            return Optional.of(wait.finding(run, logWait).withSustain(s.newestSustain()));
        }
        return active || rank != null ? Optional.empty()
                : confirmation.evaluate(run, from, logWait).map(f -> f.withSustain(s.newestSustain()));
    }

    /**
     * How far back "now" reaches when a step time is quoted or compared with the run's own earlier steps: five usual
     * report gaps, at least 15 s and at most 5 minutes.
     */
    static double recentSeconds(StepSeries steps) {
        double gap = steps.expectedReportGapSeconds();
        return Double.isNaN(gap) ? 60 : Math.max(15, Math.min(300, 5 * gap));
    }

    /** The step time now: the median of the recent reports (at least the newest three), not a lagging window's. */
    static double currentStepSeconds(StepSeries steps, double now) {
        int n = steps.size();
        if (n == 0) {
            return Double.NaN;
        }
        int from = Math.min(steps.firstIndexAtOrAfter(now - recentSeconds(steps)), Math.max(0, n - 3));
        return Stats.median(IntStream.range(from, n).mapToDouble(steps::timeS).toArray());
    }

    /**
     * The run's own best sustained pace before the recent reports: the lowest median of five consecutive reports in
     * the last half hour; NaN with fewer than five such reports.
     */
    static double earlierStepSeconds(StepSeries steps, double now) {
        int end = Math.min(steps.firstIndexAtOrAfter(now - recentSeconds(steps)), steps.size() - 3);
        int start = steps.firstIndexAtOrAfter(now - EARLIER_SECONDS);
        double[] times = IntStream.range(start, end).mapToDouble(steps::timeS).toArray();
        double best = Double.NaN;
        double[] five = new double[5];
        for (int i = 0; i + 5 <= times.length; i++) {
            System.arraycopy(times, i, five, 0, 5);
            double m = Stats.medianInPlace(five, 5);
            if (Double.isNaN(best) || m < best) {
                best = m;
            }
        }
        return best;
    }
}
