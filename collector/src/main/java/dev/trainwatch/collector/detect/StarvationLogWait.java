package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.Stats.nz;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Evidence of {@code data_starvation} from the log: what a series' newest reports say about its wait for input
 * (PixArt {@code time_data}; Sana {@code data}, {@code lm}, {@code vae}), as shares of step time.
 *
 * @param loader         data loading (NaN when no report says)
 * @param textEncoder    online text encoding (NaN when no report says)
 * @param vae            online VAE encoding (NaN when no report says)
 * @param share          all three, weighted by the steps each report covers
 * @param lowestOfNewest the lowest share among the newest {@code minReports} reports
 * @param stepSeconds    their mean step time: what a step takes now
 */
record StarvationLogWait(double loader, double textEncoder, double vae, double share, double lowestOfNewest,
                         double medianReport, double stepSeconds, int reports) {

    boolean consistentlyAbove(double s) {
        return lowestOfNewest > s && medianReport > s;
    }

    boolean encoderSplit() {
        return !Double.isNaN(textEncoder) || !Double.isNaN(vae);
    }

    double encoding() {
        return nz(textEncoder) + nz(vae);
    }

    /**
     * Raised when the newest reports each wait above the warning share and so does their median report (one long
     * wait is one report and never raises); once raised, held while their share stays above the clear share.
     */
    boolean holds(DetectorSettings.LogWait s, boolean active) {
        return active ? share > s.waitClearRatio() : consistentlyAbove(s.waitWarningRatio());
    }

    Severity severity(DetectorSettings.LogWait s) {
        return consistentlyAbove(s.waitCriticalRatio()) ? Severity.CRITICAL : Severity.WARNING;
    }

    static boolean hasWait(StepSeries s, int i) {
        return !Double.isNaN(s.dataTimeS(i)) || !Double.isNaN(s.lmTimeS(i)) || !Double.isNaN(s.vaeTimeS(i));
    }

    /**
     * The newest reports that carry a data, text-encoder or VAE time: at least {@code minReports}, back until they
     * cover {@code spanSeconds} of steps, none before {@code fromTs}; null when fewer than {@code minReports}.
     */
    static StarvationLogWait newest(StepSeries s, double fromTs, int minReports, double spanSeconds) {
        int first = s.firstIndexAtOrAfter(fromTs);
        List<Integer> picked = new ArrayList<>();
        double covered = 0;
        for (int i = s.size() - 1; i >= first; i--) {
            double t = s.timeS(i);
            if (!(t > 0) || !hasWait(s, i)) {
                continue;
            }
            if (picked.size() >= minReports && covered >= spanSeconds) {
                break;
            }
            picked.add(i);
            covered += t * s.intervalSteps(i);
        }
        if (picked.size() < minReports) {
            return null;
        }
        double[] parts = new double[3];
        boolean[] seen = new boolean[3];
        double time = 0;
        int stepsCovered = 0;
        double[] shares = new double[picked.size()];
        double lowest = Double.POSITIVE_INFINITY;
        for (int j = 0; j < picked.size(); j++) {
            int i = picked.get(j);
            double t = s.timeS(i);
            int steps = s.intervalSteps(i);
            double[] v = {s.dataTimeS(i), s.lmTimeS(i), s.vaeTimeS(i)};
            for (int p = 0; p < 3; p++) {
                if (!Double.isNaN(v[p])) {
                    seen[p] = true;
                    parts[p] += Math.min(v[p], t) * steps;
                }
            }
            // The report's share as the agent reads it (it sends a report that turns starved at once).
            shares[j] = StepEvent.waitShare(t, v[0], v[1], v[2]);
            if (j < minReports) {
                lowest = Math.min(lowest, shares[j]);
            }
            time += t * steps;
            stepsCovered += steps;
        }
        double loader = seen[0] ? parts[0] / time : Double.NaN;
        double lm = seen[1] ? parts[1] / time : Double.NaN;
        double vae = seen[2] ? parts[2] / time : Double.NaN;
        double wait = Math.min(1, nz(loader) + nz(lm) + nz(vae));
        return new StarvationLogWait(loader, lm, vae, wait, lowest, Stats.median(shares), time / stepsCovered,
                picked.size());
    }

    Map<String, Object> evidence(boolean withSplit) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("data_wait_ratio", Texts.round(share, 3));
        if (withSplit) {
            evidence.put("loader_wait_ratio", Texts.round(nz(loader), 3));
            if (encoderSplit()) {
                evidence.put("text_encoder_ratio", Texts.round(nz(textEncoder), 3));
                evidence.put("vae_ratio", Texts.round(nz(vae), 3));
            }
        }
        return evidence;
    }

    private void stepEvidence(Map<String, Object> evidence, Estimate e) {
        evidence.put("step_seconds", Texts.round(stepSeconds, 3));
        if (e != null) {
            evidence.put("predicted_step_seconds", Texts.round(e.stepSeconds(), 3));
        }
        evidence.put("step_reports", reports);
    }

    /** The run-wide finding: where the wait goes, and the fix for the larger part. */
    Finding finding(RunContext run, DetectorSettings.LogWait s) {
        RunSpec spec = run.spec();
        boolean online = spec != null && "online".equalsIgnoreCase(spec.features());
        boolean split = encoderSplit();
        Map<String, Object> evidence = evidence(split);
        stepEvidence(evidence, run.estimate());
        String message;
        boolean encodingDominates = split ? encoding() >= nz(loader) : online;
        if (split) {
            message = String.format(Locale.ROOT,
                    "%s of each %s step is spent before the model runs: data loading %s, text encoder %s, VAE %s",
                    Texts.pct(share), Texts.secs(stepSeconds), Texts.pct(nz(loader)), Texts.pct(nz(textEncoder)),
                    Texts.pct(nz(vae)));
        } else if (online) {
            message = onlineDataTime(run);
        } else if (spec != null && spec.features() != null) {
            message = String.format(Locale.ROOT, "%s of each %s step is spent waiting for the data loader",
                    Texts.pct(share), Texts.secs(stepSeconds));
        } else {
            // No spec says where the features come from: PixArt's time_data then may or may not hold encoding.
            message = String.format(Locale.ROOT, "%s of each %s step is data time: data loading, plus the T5/VAE "
                    + "encoding if the features are computed online (register the run's spec to tell them apart)",
                    Texts.pct(share), Texts.secs(stepSeconds));
            return new Finding(severity(s), message, evidence, "if the text and VAE features are computed online, "
                    + "precompute them once (PixArt: extract T5 and VAE features and set load_vae_feat / "
                    + "load_t5_feat); otherwise make the input pipeline faster (more DataLoader workers, "
                    + "pin_memory=True, data on local disk)");
        }
        if (online && run.featuresDefaulted()) {
            message += DataStarvationDetector.DEFAULTS_SAID;
        }
        String loaderFix = "make the input pipeline faster: more DataLoader workers (num_workers), "
                + "pin_memory=True and persistent_workers=True, data on local NVMe instead of network storage, "
                + "or decode/resize images ahead of time";
        String suggestion;
        if (encodingDominates && online && run.featuresDefaulted() && !split) {
            // Encoding is only assumed (the model's default): the loader first, the encoding if the run does it.
            suggestion = loaderFix + "; if the run does encode its features online, "
                    + Texts.precomputeFromObserved(run, stepSeconds, share, Double.NaN, true);
        } else if (encodingDominates) {
            // The saving as this run shows it, not the estimator's figure for a typical run.
            suggestion = Texts.precomputeFromObserved(run, stepSeconds, split ? encoding() : share,
                    split ? nz(loader) : Double.NaN, !split);
        } else {
            suggestion = loaderFix;
        }
        return new Finding(severity(s), message, evidence, suggestion);
    }

    /** The finding for one rank waiting where the others hardly do. */
    Finding rankFinding(RunContext run, DetectorSettings.LogWait s, int rank, double othersMedian, int rankCount) {
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("rank", rank);
        evidence.putAll(evidence(true));
        evidence.put("others_median_data_wait_ratio", Texts.round(othersMedian, 3));
        evidence.put("ranks", rankCount);
        stepEvidence(evidence, run.estimate());
        String message = String.format(Locale.ROOT,
                "rank %d waits for its input %s of each %s step (data loading %s, text encoder %s, VAE %s) where "
                        + "the other %d ranks wait %s: every rank waits for it at the gradient all-reduce",
                rank, Texts.pct(share), Texts.secs(stepSeconds), Texts.pct(nz(loader)), Texts.pct(nz(textEncoder)),
                Texts.pct(nz(vae)), rankCount - 1, Texts.pct(othersMedian));
        String suggestion = encoding() > nz(loader)
                ? "rank " + rank + " encodes its inputs more slowly than the others: check its GPU (clocks, "
                        + "sharing) and whether its shard holds larger samples; precomputing the text and VAE "
                        + "features takes the encoding off every rank"
                : "look at rank " + rank + "'s input: its node's disk or network storage, its DataLoader "
                        + "workers (num_workers, CPU cores shared with other processes) and whether its shard "
                        + "holds larger or slower-to-decode samples; the other ranks load theirs in time";
        return new Finding(severity(s), message, evidence, suggestion);
    }

    /**
     * The headline for a data timer that holds the loader and the online encoders (PixArt's {@code time_data}): it
     * names encoding as the bulk only when the encoders, priced from this run's own steps, are at least half of it.
     */
    private String onlineDataTime(RunContext run) {
        String what = Texts.encoders(run.estimate()).orElse("text/VAE");
        Repricing r = Texts.repricedWithPrecomputedFeatures(run, stepSeconds, share, Double.NaN, true);
        double encodingSeconds = r == null ? Double.NaN : stepSeconds - r.stepSeconds();
        if (encodingSeconds >= 0 && encodingSeconds < 0.5 * share * stepSeconds) {
            return String.format(Locale.ROOT, "%s of each %s step is data time, mostly waiting for the loader: priced "
                    + "from this run's own steps, the online %s encoding is about %s of its %s", Texts.pct(share),
                    Texts.secs(stepSeconds), what, Texts.secs(encodingSeconds), Texts.secs(share * stepSeconds));
        }
        return String.format(Locale.ROOT, "%s of each %s step is data time, which includes the online %s encoding "
                + "(features are computed online)", Texts.pct(share), Texts.secs(stepSeconds), what);
    }
}
