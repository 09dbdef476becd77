package dev.trainwatch.collector.history;

import dev.trainwatch.collector.detect.Stats;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Turns finished-run outcomes into calibration factors per (GPU id, model family). Pure function.
 *
 * <p>Every verdict compares with the calibrated prediction, so one odd run must not move it: per group, of the newest
 * {@link #WINDOW} runs (none excluded, none before a reset), ratios outside [0.2, 5] are broken runs; the median of
 * the log ratios without outliers (beyond {@link #OUTLIER_RATIO}) needs {@link #MIN_RUNS} runs, is shrunk towards 1
 * as if {@link #PRIOR_RUNS} runs had matched, and bounded to [{@link #MIN_FACTOR}, {@link #MAX_FACTOR}].
 */
public final class Calibrator {
    public static final int MIN_RUNS = 3;
    public static final int WINDOW = 20;
    public static final double PRIOR_RUNS = 2;
    public static final double OUTLIER_RATIO = 1.5;
    public static final double MIN_FACTOR = 0.5;
    public static final double MAX_FACTOR = 2.0;
    private static final double MIN_RATIO = 0.2;
    private static final double MAX_RATIO = 5.0;

    private Calibrator() {
    }

    /** Factors per group; {@code resets} per group {@link #key}: older outcomes do not count. */
    public static List<CalibrationFactors> factors(List<RunOutcome> outcomesOldestFirst,
                                                   Set<String> excluded, Map<String, Instant> resets) {
        Map<String, List<RunOutcome>> groups = outcomesOldestFirst.stream().collect(Collectors.groupingBy(
                outcome -> key(outcome.gpuId(), outcome.family()), LinkedHashMap::new, Collectors.toList()));
        List<CalibrationFactors> factors = new ArrayList<>();
        for (Map.Entry<String, List<RunOutcome>> entry : groups.entrySet()) {
            List<RunOutcome> group = entry.getValue();
            Instant resetAt = resets.get(entry.getKey());
            List<RunOutcome> candidates = new ArrayList<>();
            List<String> excludedRuns = new ArrayList<>();
            for (int i = group.size() - 1; i >= 0 && candidates.size() < WINDOW; i--) {
                RunOutcome o = group.get(i);
                if (excluded.contains(o.runId())) {
                    excludedRuns.add(o.runId());
                } else if (resetAt == null || o.at().isAfter(resetAt)) {
                    candidates.add(o);
                }
            }
            List<String> stepIds = new ArrayList<>();
            List<Double> stepLogs = new ArrayList<>();
            List<Double> memLogs = new ArrayList<>();
            for (RunOutcome o : candidates) {
                double step = o.observedStepSeconds() / o.predictedStepSeconds();
                if (usable(step)) {
                    stepIds.add(o.runId());
                    stepLogs.add(Math.log(step));
                }
                if (o.observedPeakBytes() != null && o.predictedPeakBytes() != null && o.predictedPeakBytes() > 0) {
                    double mem = (double) o.observedPeakBytes() / o.predictedPeakBytes();
                    if (usable(mem)) {
                        memLogs.add(Math.log(mem));
                    }
                }
            }
            List<String> used = new ArrayList<>();
            List<String> outliers = new ArrayList<>();
            double stepFactor = robust(stepLogs, stepIds, used, outliers);
            double memFactor = robust(memLogs, null, null, null);
            RunOutcome first = group.get(0);
            factors.add(new CalibrationFactors(first.gpuId(), first.family(), stepFactor, memFactor, group.size(),
                    List.copyOf(used), List.copyOf(outliers), List.copyOf(excludedRuns),
                    used.size() >= MIN_RUNS || memLogs.size() >= MIN_RUNS));
        }
        return factors;
    }

    public static List<CalibrationFactors> factors(HistoryStore store) {
        return factors(store.outcomes(), store.calibrationExclusions(), store.calibrationResets());
    }

    public static String key(String gpuId, String family) {
        return gpuId + "/" + family;
    }

    /** The shrunk, bounded median without outliers; with {@code ids}, fills {@code used} and {@code outliers}. */
    private static double robust(List<Double> logs, List<String> ids, List<String> used, List<String> outliers) {
        if (logs.size() < MIN_RUNS) {
            if (ids != null) {
                used.addAll(ids);
            }
            return 1.0;
        }
        double centre = Stats.median(logs);
        double limit = Math.log(OUTLIER_RATIO);
        List<Double> kept = new ArrayList<>();
        for (int i = 0; i < logs.size(); i++) {
            boolean outlier = Math.abs(logs.get(i) - centre) > limit;
            if (!outlier) {
                kept.add(logs.get(i));
            }
            if (ids != null) {
                (outlier ? outliers : used).add(ids.get(i));
            }
        }
        if (kept.size() < MIN_RUNS) {
            return 1.0;
        }
        double shrunk = Stats.median(kept) * kept.size() / (kept.size() + PRIOR_RUNS);
        return Math.max(MIN_FACTOR, Math.min(MAX_FACTOR, Math.exp(shrunk)));
    }

    private static boolean usable(double ratio) {
        return Double.isFinite(ratio) && ratio >= MIN_RATIO && ratio <= MAX_RATIO;
    }
}
