package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.protocol.RunSpec;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Evidence of {@code data_starvation} without a data time in the log: the GPUs' utilisation samples show repeated
 * idle gaps while steps are slower than expected — than the estimate with a spec, else than the run's own earlier
 * steps. Where the GPU counts its SMs (GPM, over the whole poll interval), a poll whose SM activity falls under half the
 * GPU's working level is a gap too, even when the driver's few utilisation samples a second miss it.
 */
final class StarvationIdleGaps {

    private final DetectorSettings.IdleGaps s;

    StarvationIdleGaps(DetectorSettings.IdleGaps settings) {
        this.s = settings;
    }

    Optional<Finding> evaluate(RunContext run, double from, boolean active, int reports) {
        Estimate e = run.estimate();
        boolean predicted = e != null && e.stepSeconds() > 0;
        double current = DataStarvationDetector.currentStepSeconds(run.steps(), run.now());
        double expected;
        double ratio;
        double gapsFrom;
        if (predicted) {
            expected = e.stepSeconds();
            ratio = WindowStats.medianStepSeconds(run.steps(), from) / expected;
            gapsFrom = from;
        } else {
            // No spec: the run is its own yardstick, and the gaps are looked for since it slowed down.
            expected = DataStarvationDetector.earlierStepSeconds(run.steps(), run.now());
            ratio = current / expected;
            gapsFrom = run.now() - DataStarvationDetector.recentSeconds(run.steps());
        }
        if (!(ratio > (active ? 1 + (s.slowStepRatio() - 1) / 2 : s.slowStepRatio()))) {
            return Optional.empty();
        }
        int polls = 0;
        int gappy = 0;
        int smDips = 0;
        double idleSum = 0;
        for (GpuSeries g : run.gpus()) {
            double working = smWorkingLevel(g, from);
            for (int i = g.firstIndexAtOrAfter(gapsFrom); i < g.size(); i++) {
                double idle = g.reading(Reading.IDLE_FRACTION, i);
                if (Double.isNaN(idle)) {
                    continue;
                }
                polls++;
                idleSum += idle;
                double sm = g.reading(Reading.SM_ACTIVE, i);
                if (idle >= s.idleGapFraction()) {
                    gappy++;
                } else if (!Double.isNaN(sm) && working > 0.2 && sm < working / 2) {
                    gappy++;
                    smDips++;
                }
            }
        }
        double share = (double) gappy / polls;
        if (polls < s.minPolls() || share < (active ? s.idleGapPollShare() * 0.75 : s.idleGapPollShare())) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("polls_with_idle_gaps_ratio", Texts.round(share, 3));
        if (smDips > 0) {
            evidence.put("polls_with_sm_dips_ratio", Texts.round((double) smDips / polls, 3));
        }
        evidence.put("mean_idle_fraction", Texts.round(idleSum / polls, 3));
        evidence.put("step_seconds", Texts.round(current, 3));
        evidence.put(predicted ? "predicted_step_seconds" : "earlier_step_seconds", Texts.round(expected, 3));
        evidence.put(predicted ? "step_time_ratio" : "slowdown_ratio", Texts.round(ratio, 2));
        evidence.put("step_reports", reports);
        // Where the SM counters saw most of the gaps, the message says so (utilisation samples missed them).
        String seen = smDips * 2 > gappy
                ? String.format(Locale.ROOT, "the GPUs' SM activity drops below half its working level between steps in "
                        + "%s of polls (utilisation misses it: mean idle %s)", Texts.pct(share), Texts.pct(idleSum / polls))
                : String.format(Locale.ROOT, "the GPUs go idle between kernels in %s of polls (mean idle %s)",
                        Texts.pct(share), Texts.pct(idleSum / polls));
        String message = predicted
                ? String.format(Locale.ROOT,
                        "%s while steps take %s instead of %s: the GPU is waiting for input (the log does not say "
                                + "whether loading or encoding)", seen, Texts.secs(current), Texts.secs(expected))
                : String.format(Locale.ROOT,
                        "%s while steps take %s, %s slower than this run's own earlier %s: the GPU is waiting for "
                                + "input (the log does not say whether loading or encoding)",
                        seen, Texts.secs(current), Texts.times(ratio), Texts.secs(expected));
        RunSpec spec = run.spec();
        boolean online = spec != null && "online".equalsIgnoreCase(spec.features()) && e != null;
        if (online && run.featuresDefaulted()) {
            message += DataStarvationDetector.DEFAULTS_SAID;
        }
        return Optional.of(new Finding(Severity.WARNING, message, evidence, fix(run, online)));
    }

    /**
     * Precomputing when the spec says the features are encoded online; the loader first when it only left them at
     * the model's default (no cause is named then).
     */
    private static String fix(RunContext run, boolean online) {
        String loader = "profile the input pipeline (time the DataLoader iterator); add workers, pin memory, move the "
                + "data to local disk";
        if (!online) {
            return loader;
        }
        Estimate e = run.estimate();
        String precompute = Texts.suggestion(e, "precompute").map(x -> Texts.describe(x, e))
                .orElse("precompute the text and VAE features");
        return run.featuresDefaulted() ? loader + "; if the run does encode its features online (the model's default,"
                + " which its spec left as it is), " + precompute : precompute;
    }

    /** The GPU's working SM activity over the window: its 80th percentile; NaN without counters. */
    static double smWorkingLevel(GpuSeries g, double from) {
        double[] v = WindowStats.readings(g, from, i -> g.reading(Reading.SM_ACTIVE, i));
        Arrays.sort(v);
        return v.length < 5 ? Double.NaN : v[Math.min(v.length - 1, (int) Math.floor(0.8 * v.length))];
    }
}
