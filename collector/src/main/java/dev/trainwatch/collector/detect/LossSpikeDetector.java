package dev.trainwatch.collector.detect;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * {@code loss_spike}: the loss jumped far above its recent level, for its multi-scale bucket, and stayed there
 * (thresholds: docs/DETECTORS.md).
 */
public final class LossSpikeDetector extends BaseDetector {

    static final int RECENT = 5;
    static final int ELEVATED_NEEDED = 4;
    static final int MIN_BASELINE = 20;
    static final int MIN_BUCKET_BASELINE = 10;

    public LossSpikeDetector() {
        super(AnomalyKind.LOSS_SPIKE);
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        LossHealth h = run.loss();
        int n = h.finiteCount();
        int baseEnd = n - RECENT;
        if (baseEnd < MIN_BASELINE) {
            return Optional.empty();
        }
        int judged = 0;
        int elevated = 0;
        double[] ratios = new double[RECENT];
        double[] excessInSpreads = new double[RECENT];
        double baselineMedian = Double.NaN;
        long firstStep = -1;
        for (int r = baseEnd; r < n; r++) {
            double[] base = baseline(h, baseEnd, h.finiteBucket(r));
            if (base.length < MIN_BUCKET_BASELINE) {
                continue;
            }
            double m = Stats.median(base);
            double spread = 1.4826 * mad(base, m);
            double loss = h.finiteLoss(r);
            if (!(m > 0)) {
                continue;
            }
            ratios[judged] = loss / m;
            excessInSpreads[judged] = spread > 0 ? (loss - m) / spread : (loss > m ? Double.POSITIVE_INFINITY : 0);
            judged++;
            double lift = active ? 0.15 : 0.25;
            if (loss > m + Math.max((active ? 2 : 3) * spread, lift * m)) {
                elevated++;
                if (firstStep < 0) {
                    firstStep = h.finiteStep(r);
                }
            }
            baselineMedian = m;
        }
        if (judged < ELEVATED_NEEDED) {
            return Optional.empty();
        }
        double ratio = Stats.median(Arrays.copyOf(ratios, judged));
        double spreads = Stats.median(Arrays.copyOf(excessInSpreads, judged));
        boolean raise = elevated >= ELEVATED_NEEDED && ratio > 1.5 && spreads > 6;
        boolean hold = active && elevated >= 2 && ratio > 1.25;
        if (!raise && !hold) {
            return Optional.empty();
        }
        double recentMedian = Stats.median(IntStream.range(baseEnd, n).mapToDouble(h::finiteLoss).toArray());
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("recent_loss", Texts.round(recentMedian, 6));
        evidence.put("baseline_loss", Texts.round(baselineMedian, 6));
        evidence.put("ratio", Texts.round(ratio, 2));
        evidence.put("elevated_reports", elevated);
        evidence.put("judged_reports", judged);
        if (firstStep >= 0) {
            evidence.put("since_step", firstStep);
        }
        String message = String.format(Locale.ROOT, "the loss jumped to %.4g from %.4g (%s) in %d of the last %d "
                + "reports%s and has not come back", recentMedian, baselineMedian, Texts.times(ratio), elevated,
                judged, firstStep >= 0 ? " since step " + firstStep : "");
        return Optional.of(new Finding(Severity.WARNING, message, evidence,
                "a loss that jumps and stays up usually means the learning rate is too high for this point (a "
                        + "warm-up that ended, a restart with a fresh optimizer state) or bad data in the shard now "
                        + "being read; compare samples from the last checkpoint, and resume from it with a lower "
                        + "learning rate if they got worse"));
    }

    /** The bucket's losses before {@code end}: a loop, not a stream, as it runs for every report judged. */
    private static double[] baseline(LossHealth h, int end, int bucket) {
        double[] out = new double[end];
        int k = 0;
        for (int i = 0; i < end; i++) {
            if (h.finiteBucket(i) == bucket) {
                out[k++] = h.finiteLoss(i);
            }
        }
        return Arrays.copyOf(out, k);
    }

    private static double mad(double[] values, double median) {
        double[] deviations = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            deviations[i] = Math.abs(values[i] - median);
        }
        return Stats.medianInPlace(deviations, deviations.length);
    }
}
