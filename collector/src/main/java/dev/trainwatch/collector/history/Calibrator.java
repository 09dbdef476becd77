package dev.trainwatch.collector.history;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns finished-run outcomes into calibration factors per (GPU id, model family). Pure function.
 *
 * <p>Each factor is a weighted geometric mean of the observed/predicted ratios of that group's runs with a prior
 * ratio of 1 of weight {@link #PRIOR_WEIGHT}: one run observed at 1.4× its prediction moves the factor to
 * 1.4^(1/1.25) ≈ 1.31, most of the way, while one odd run cannot swing it entirely; later runs count more than
 * earlier ones ({@link #DECAY} per run), since software and drivers change. Ratios outside [0.2, 5] are ignored
 * as broken runs (a hang, a mislabelled spec), not calibration signal.
 */
public final class Calibrator {
    /** Weight of the uncalibrated prediction, in runs. */
    public static final double PRIOR_WEIGHT = 0.25;
    /** Weight of each older run relative to the next newer one. */
    public static final double DECAY = 0.8;
    private static final double MIN_RATIO = 0.2;
    private static final double MAX_RATIO = 5.0;

    private Calibrator() {
    }

    /** Factors per group, for outcomes given oldest first. Groups with no usable run are absent. */
    public static List<CalibrationFactors> factors(List<RunOutcome> outcomesOldestFirst) {
        Map<String, List<RunOutcome>> groups = new LinkedHashMap<>();
        for (RunOutcome outcome : outcomesOldestFirst) {
            groups.computeIfAbsent(outcome.gpuId() + "\u0000" + outcome.family(), k -> new ArrayList<>()).add(outcome);
        }
        List<CalibrationFactors> factors = new ArrayList<>();
        for (List<RunOutcome> group : groups.values()) {
            double stepLogSum = 0;
            double stepWeight = PRIOR_WEIGHT;
            double memLogSum = 0;
            double memWeight = PRIOR_WEIGHT;
            int used = 0;
            double weight = 1.0;
            for (int i = group.size() - 1; i >= 0; i--, weight *= DECAY) {
                RunOutcome outcome = group.get(i);
                double stepRatio = outcome.observedStepSeconds() / outcome.predictedStepSeconds();
                if (usable(stepRatio)) {
                    stepLogSum += weight * Math.log(stepRatio);
                    stepWeight += weight;
                    used++;
                }
                if (outcome.observedPeakBytes() != null && outcome.predictedPeakBytes() != null
                        && outcome.predictedPeakBytes() > 0) {
                    double memRatio = (double) outcome.observedPeakBytes() / outcome.predictedPeakBytes();
                    if (usable(memRatio)) {
                        memLogSum += weight * Math.log(memRatio);
                        memWeight += weight;
                    }
                }
            }
            if (used == 0 && memWeight == PRIOR_WEIGHT) {
                continue;
            }
            RunOutcome first = group.get(0);
            factors.add(new CalibrationFactors(first.gpuId(), first.family(), Math.exp(stepLogSum / stepWeight),
                    Math.exp(memLogSum / memWeight), group.size()));
        }
        return factors;
    }

    private static boolean usable(double ratio) {
        return Double.isFinite(ratio) && ratio >= MIN_RATIO && ratio <= MAX_RATIO;
    }
}
