package dev.trainwatch.collector.history;

import dev.trainwatch.collector.detect.Stats;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns finished-run outcomes into calibration factors per (GPU id, model family). Pure function.
 *
 * <p>Calibration must need evidence, because every verdict compares with the calibrated prediction: one odd run (a
 * spec that said batch 12 for a run at batch 4) must not move every later prediction. So, per group and separately
 * for step time and memory:
 * <ul>
 * <li>only the newest {@link #WINDOW} runs count, none a user excluded, none from before the group was reset;</li>
 * <li>ratios outside [0.2, 5] are broken runs (a hang, a mislabelled spec), not signal;</li>
 * <li>the centre is the <em>median</em> of the log ratios, and runs more than a factor {@link #OUTLIER_RATIO} from it
 *     are outliers, left out and listed; the median of the rest is the estimate;</li>
 * <li>at least {@link #MIN_RUNS} runs must remain, else the factor stays 1 (listed as not applied);</li>
 * <li>the estimate is shrunk towards no change as if {@link #PRIOR_RUNS} runs had matched the prediction, and
 *     bounded to [{@link #MIN_FACTOR}, {@link #MAX_FACTOR}].</li>
 * </ul>
 * With the median, a single run moves the factor only as far as the run next to it in the order of ratios.
 */
public final class Calibrator {
    /** Runs that must agree before a factor applies. */
    public static final int MIN_RUNS = 3;
    /** Newest runs of a group that count. */
    public static final int WINDOW = 20;
    /** Weight of "the prediction was right", in runs, that the estimate is shrunk towards. */
    public static final double PRIOR_RUNS = 2;
    /** A run whose ratio is more than this factor from the median is an outlier. */
    public static final double OUTLIER_RATIO = 1.5;
    /** The largest correction applied either way. */
    public static final double MIN_FACTOR = 0.5;
    public static final double MAX_FACTOR = 2.0;
    private static final double MIN_RATIO = 0.2;
    private static final double MAX_RATIO = 5.0;

    private Calibrator() {
    }

    /** Factors per group, for outcomes given oldest first, with no exclusions and no resets. */
    public static List<CalibrationFactors> factors(List<RunOutcome> outcomesOldestFirst) {
        return factors(outcomesOldestFirst, Set.of(), Map.of());
    }

    /**
     * Factors per group.
     *
     * @param outcomesOldestFirst every recorded outcome, oldest first
     * @param excluded            run ids a user excluded from calibration
     * @param resets              per group key ({@link #key}), when it was reset: older outcomes do not count
     */
    public static List<CalibrationFactors> factors(List<RunOutcome> outcomesOldestFirst,
                                                   Set<String> excluded, Map<String, Instant> resets) {
        Map<String, List<RunOutcome>> groups = new LinkedHashMap<>();
        for (RunOutcome outcome : outcomesOldestFirst) {
            groups.computeIfAbsent(key(outcome.gpuId(), outcome.family()), k -> new ArrayList<>()).add(outcome);
        }
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

    /** Factors from everything the history holds: outcomes, exclusions and resets. */
    public static List<CalibrationFactors> factors(HistoryStore store) {
        return factors(store.outcomes(), store.calibrationExclusions(), store.calibrationResets());
    }

    /** The group key used by resets: {@code gpu/family}. */
    public static String key(String gpuId, String family) {
        return gpuId + "/" + family;
    }

    /**
     * The shrunk, bounded median of {@code logs} without its outliers; 1 with fewer than {@link #MIN_RUNS}.
     * When {@code ids} is given, the ids of the runs used and of the outliers are added to the lists.
     */
    private static double robust(List<Double> logs, List<String> ids, List<String> used, List<String> outliers) {
        if (logs.size() < MIN_RUNS) {
            if (ids != null) {
                used.addAll(ids);
            }
            return 1.0;
        }
        double centre = median(logs);
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
        double shrunk = median(kept) * kept.size() / (kept.size() + PRIOR_RUNS);
        return Math.max(MIN_FACTOR, Math.min(MAX_FACTOR, Math.exp(shrunk)));
    }

    private static double median(List<Double> values) {
        return Stats.median(values);
    }

    private static boolean usable(double ratio) {
        return Double.isFinite(ratio) && ratio >= MIN_RATIO && ratio <= MAX_RATIO;
    }
}
