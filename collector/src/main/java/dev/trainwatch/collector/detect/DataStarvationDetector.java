package dev.trainwatch.collector.detect;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code data_starvation}: the GPU waits for input. Two routes:
 * <ul>
 * <li>the log's data-wait share of step time is high in its newest reports (PixArt {@code time_data}; Sana
 *     {@code data}, {@code lm}, {@code vae}): the newest two each, and the median of the newest reports covering
 *     30 s of steps — decided as soon as they say so, whatever the run did before (a five-minute share of a run that
 *     was healthy for an hour takes minutes to cross a threshold);</li>
 * <li>no split in the log, but the utilisation windows show repeated idle gaps while steps are slower than
 *     predicted.</li>
 * </ul>
 * When ranks report their own data times (Open-Sora's {@code record_time} lines give every rank's
 * {@code load_data}), the rank that waits longest is looked at too: one rank waiting while the others do not is a
 * data-starved rank that every rank waits for at the gradient all-reduce, and the finding names it. The run-wide
 * shares are then those of the rank that waits most.
 * The message separates data loading from online encoding when the log tells them apart (Sana), and says that
 * PixArt's {@code time_data} includes the T5/VAE encoding when the features are computed online.
 */
public final class DataStarvationDetector implements Detector {

    private final DetectorSettings.DataStarvation s;

    public DataStarvationDetector(DetectorSettings settings) {
        this.s = settings.dataStarvation();
    }

    @Override
    public AnomalyKind kind() {
        return AnomalyKind.DATA_STARVATION;
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        double from = run.now() - s.window().toMillis() / 1000.0;
        StepSeries steps = run.steps();
        int reports = WindowStats.reports(steps, from);
        if (reports < s.minStepReports()) {
            return Optional.empty();
        }
        double span = s.newestSpan().toMillis() / 1000.0;
        // Each rank's newest reports, where ranks report their own split.
        RankSeries ranks = run.ranks();
        List<NewestWait> byRank = new ArrayList<>();
        List<Integer> rankIds = new ArrayList<>();
        for (int k = 0; k < ranks.count(); k++) {
            NewestWait w = newestWait(ranks.steps(k), from, s.minStepReports(), span);
            if (w != null) {
                byRank.add(w);
                rankIds.add(ranks.rank(k));
            }
        }
        int worst = -1;
        for (int i = 0; i < byRank.size(); i++) {
            if (worst < 0 || byRank.get(i).share() > byRank.get(worst).share()) {
                worst = i;
            }
        }
        if (byRank.size() >= 2) {
            NewestWait w = byRank.get(worst);
            double[] others = new double[byRank.size() - 1];
            for (int i = 0, o = 0; i < byRank.size(); i++) {
                if (i != worst) {
                    others[o++] = byRank.get(i).share();
                }
            }
            double othersMedian = Stats.median(others);
            // One rank waiting where the others hardly do: that rank's input is the problem, not the run's pipeline.
            if (holds(w, active) && othersMedian < w.share() / 2) {
                return Optional.of(fromRank(run, w, rankIds.get(worst), othersMedian, byRank.size())
                        .withSustain(s.newestSustain()));
            }
        }
        // Run-wide: the rank that waits most (every rank waits for it at the all-reduce), else the run's reports.
        NewestWait wait = byRank.size() >= 2 ? byRank.get(worst)
                : newestWait(steps, from, s.minStepReports(), span);
        if (wait != null) {
            if (holds(wait, active)) {
                return Optional.of(fromLog(run, wait).withSustain(s.newestSustain()));
            }
            return active || byRank.size() >= 2 ? Optional.empty() : confirmedByGpus(run, from);
        }
        return fromUtilization(run, from, active, reports);
    }

    /**
     * The newest report alone, when the GPUs say the same: it waits above the warning share, the run's GPUs show
     * idle gaps through its steps and go on showing them for {@code gpuConfirm} after it was written, and did not
     * before its steps. A run that turns starved is then named one report after the fault plus a few seconds,
     * however seldom a slowed-down log reports (a log printed every 5 steps of 4 s reports every 20 s). One long wait
     * (an epoch boundary re-spawning the DataLoader workers, a cold shard) is one report too, but the GPUs are busy
     * again once it was written, so it raises nothing.
     */
    private Optional<Finding> confirmedByGpus(RunContext run, double from) {
        StepSeries steps = run.steps();
        NewestWait newest = newestWait(steps, from, 1, 0);
        if (newest == null || !(newest.medianReport() > s.waitWarningRatio())) {
            return Optional.empty();
        }
        // The report newestWait read: the newest one that says how long it waited (a report without a data time,
        // say a rank's line without the split, may have come after it).
        int last = steps.size() - 1;
        while (last >= 0 && Double.isNaN(steps.dataTimeS(last)) && Double.isNaN(steps.lmTimeS(last))
                && Double.isNaN(steps.vaeTimeS(last))) {
            last--;
        }
        if (last < 0) {
            return Optional.empty();
        }
        double writtenAt = steps.ts(last);
        double since = run.now() - writtenAt;
        if (since < s.gpuConfirmEvenGaps().toMillis() / 1000.0) {
            return Optional.empty();
        }
        double spanStart = writtenAt - steps.timeS(last) * Math.max(1, steps.intervalSteps(last));
        // Gaps all through the report's steps (a starved loop) need only a glance after it; gaps bunched in one
        // stretch of it (one long wait) need the full confirmation, which the busy GPUs after such a wait deny.
        boolean throughout = gapsThroughout(run, spanStart, writtenAt, steps.timeS(last));
        double confirm = throughout ? s.gpuConfirmEvenGaps().toMillis() / 1000.0 : s.gpuConfirm().toMillis() / 1000.0;
        if (since < confirm) {
            return Optional.empty();
        }
        double during = gappyShare(run, spanStart, writtenAt);
        // Polls after the report's own: the poll that read it covers the second before it.
        double after = gappyShare(run, Math.nextUp(writtenAt), run.now() + 1e-9);
        double before = gappyShare(run, from, spanStart);
        double needed = s.idleGapPollShare();
        if (!(during >= needed && after >= needed) || !(before < needed / 2 || Double.isNaN(before))) {
            return Optional.empty();
        }
        Finding f = fromLog(run, newest);
        Map<String, Object> evidence = new LinkedHashMap<>(f.evidence());
        evidence.put("polls_with_idle_gaps_during_report_ratio", Texts.round(during, 3));
        evidence.put("idle_gaps_all_through_report", throughout);
        evidence.put("polls_with_idle_gaps_since_report_ratio", Texts.round(after, 3));
        evidence.put("seconds_since_report", Texts.round(since, 1));
        return Optional.of(new Finding(f.severity(), f.message() + String.format(Locale.ROOT,
                "; the GPUs idled between %s steps (%s of polls) and have since (%s of polls in the last %s)",
                throughout ? "all its" : "its", Texts.pct(during), Texts.pct(after), Texts.secs(since)), evidence,
                f.suggestion()).withSustain(s.newestSustain()));
    }

    /**
     * Whether the run's GPUs idled between steps all through [from, to): cut into parts of at least
     * {@code EVEN_GAP_PART_STEPS} steps of {@code stepSeconds} (at least {@code EVEN_GAP_PARTS} of them, at most
     * {@code EVEN_GAP_MAX_PARTS}), every part has a poll with an idle gap and a poll with work (at most
     * {@code 1 - idleGapFraction} of its samples idle). A starved loop waits before every step, so each part holds
     * a wait and a step; one long wait leaves whole parts idle and others without a gap. False when the span is too
     * short for the parts.
     */
    private boolean gapsThroughout(RunContext run, double from, double to, double stepSeconds) {
        int parts = (int) Math.min(DetectorSettings.DataStarvation.EVEN_GAP_MAX_PARTS,
                Math.floor((to - from) / (DetectorSettings.DataStarvation.EVEN_GAP_PART_STEPS * stepSeconds)));
        if (!(stepSeconds > 0) || parts < DetectorSettings.DataStarvation.EVEN_GAP_PARTS) {
            return false;
        }
        double part = (to - from) / parts;
        boolean[] gap = new boolean[parts];
        boolean[] work = new boolean[parts];
        for (GpuSeries g : run.gpus()) {
            for (int i = g.firstIndexAtOrAfter(from); i < g.size() && g.ts(i) < to; i++) {
                double idle = g.idleFraction(i);
                if (Double.isNaN(idle)) {
                    continue;
                }
                int k = Math.min(parts - 1, (int) ((g.ts(i) - from) / part));
                gap[k] |= idle >= s.idleGapFraction();
                work[k] |= idle <= 1 - s.idleGapFraction();
            }
        }
        for (int k = 0; k < parts; k++) {
            if (!gap[k] || !work[k]) {
                return false;
            }
        }
        return true;
    }

    /** The share of the run's GPU polls in [from, to) whose buffered samples show an idle gap; NaN without any. */
    private double gappyShare(RunContext run, double from, double to) {
        int polls = 0;
        int gappy = 0;
        for (GpuSeries g : run.gpus()) {
            for (int i = g.firstIndexAtOrAfter(from); i < g.size() && g.ts(i) < to; i++) {
                double idle = g.idleFraction(i);
                if (Double.isNaN(idle)) {
                    continue;
                }
                polls++;
                if (idle >= s.idleGapFraction()) {
                    gappy++;
                }
            }
        }
        return polls == 0 ? Double.NaN : (double) gappy / polls;
    }

    /**
     * Raised when the newest reports each wait above the warning share and so does their median report (one long
     * wait is one report and never raises); once raised, held while their share stays above the clear share.
     */
    private boolean holds(NewestWait w, boolean active) {
        return active ? w.share() > s.waitClearRatio() : w.consistentlyAbove(s.waitWarningRatio());
    }

    private Severity severity(NewestWait w) {
        return w.consistentlyAbove(s.waitCriticalRatio()) ? Severity.CRITICAL : Severity.WARNING;
    }

    /**
     * What a series' newest reports say about its wait for input, as shares of step time.
     *
     * @param loader         data loading (NaN when no report says)
     * @param textEncoder    online text encoding (NaN when no report says)
     * @param vae            online VAE encoding (NaN when no report says)
     * @param share          all three, weighted by the steps each report covers
     * @param lowestOfNewest the lowest share among the newest {@code minStepReports} reports
     * @param medianReport   the median report's share
     * @param stepSeconds    their mean step time: what a step takes now
     * @param reports        how many reports
     */
    record NewestWait(double loader, double textEncoder, double vae, double share, double lowestOfNewest,
                      double medianReport, double stepSeconds, int reports) {

        boolean consistentlyAbove(double share) {
            return lowestOfNewest > share && medianReport > share;
        }

        boolean encoderSplit() {
            return !Double.isNaN(textEncoder) || !Double.isNaN(vae);
        }
    }

    /**
     * The newest reports that carry a data, text-encoder or VAE time: at least {@code minReports}, back until they
     * cover {@code spanSeconds} of steps, none before {@code fromTs}; null when fewer than {@code minReports}.
     */
    static NewestWait newestWait(StepSeries s, double fromTs, int minReports, double spanSeconds) {
        int first = s.firstIndexAtOrAfter(fromTs);
        List<Integer> picked = new ArrayList<>();
        double covered = 0;
        for (int i = s.size() - 1; i >= first; i--) {
            double t = s.timeS(i);
            if (!(t > 0) || Double.isNaN(s.dataTimeS(i)) && Double.isNaN(s.lmTimeS(i)) && Double.isNaN(s.vaeTimeS(i))) {
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
        return new NewestWait(loader, lm, vae, wait, lowest, Stats.median(shares), time / stepsCovered,
                picked.size());
    }

    private Finding fromRank(RunContext run, NewestWait w, int rank, double othersMedianWait, int rankCount) {
        Estimate e = run.estimate();
        double stepSeconds = w.stepSeconds();
        double encoding = nz(w.textEncoder()) + nz(w.vae());
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("rank", rank);
        evidence.put("data_wait_ratio", Texts.round(w.share(), 3));
        evidence.put("loader_wait_ratio", Texts.round(nz(w.loader()), 3));
        if (w.encoderSplit()) {
            evidence.put("text_encoder_ratio", Texts.round(nz(w.textEncoder()), 3));
            evidence.put("vae_ratio", Texts.round(nz(w.vae()), 3));
        }
        evidence.put("others_median_data_wait_ratio", Texts.round(othersMedianWait, 3));
        evidence.put("ranks", rankCount);
        evidence.put("step_seconds", Texts.round(stepSeconds, 3));
        if (e != null) {
            evidence.put("predicted_step_seconds", Texts.round(e.stepSeconds(), 3));
        }
        evidence.put("step_reports", w.reports());
        String message = String.format(Locale.ROOT,
                "rank %d waits for its input %s of each %s step (data loading %s, text encoder %s, VAE %s) where "
                        + "the other %d ranks wait %s: every rank waits for it at the gradient all-reduce",
                rank, Texts.pct(w.share()), Texts.secs(stepSeconds), Texts.pct(nz(w.loader())),
                Texts.pct(nz(w.textEncoder())), Texts.pct(nz(w.vae())), rankCount - 1,
                Texts.pct(othersMedianWait));
        String suggestion = encoding > nz(w.loader())
                ? "rank " + rank + " encodes its inputs more slowly than the others: check its GPU (clocks, "
                        + "sharing) and whether its shard holds larger samples; precomputing the text and VAE "
                        + "features takes the encoding off every rank"
                : "look at rank " + rank + "'s input: its node's disk or network storage, its DataLoader "
                        + "workers (num_workers, CPU cores shared with other processes) and whether its shard "
                        + "holds larger or slower-to-decode samples; the other ranks load theirs in time";
        return new Finding(severity(w), message, evidence, suggestion);
    }

    private Finding fromLog(RunContext run, NewestWait w) {
        RunSpec spec = run.spec();
        Estimate e = run.estimate();
        // What a step takes now: the newest reports' own, not a window's median that lags a slowdown by minutes.
        double stepSeconds = w.stepSeconds();
        double wait = w.share();
        double loader = w.loader();
        double lm = w.textEncoder();
        double vae = w.vae();
        boolean online = spec != null && "online".equalsIgnoreCase(spec.features());
        boolean split = w.encoderSplit();
        double encoding = nz(lm) + nz(vae);
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("data_wait_ratio", Texts.round(wait, 3));
        if (split) {
            evidence.put("loader_wait_ratio", Texts.round(nz(loader), 3));
            evidence.put("text_encoder_ratio", Texts.round(nz(lm), 3));
            evidence.put("vae_ratio", Texts.round(nz(vae), 3));
        }
        evidence.put("step_seconds", Texts.round(stepSeconds, 3));
        if (e != null) {
            evidence.put("predicted_step_seconds", Texts.round(e.stepSeconds(), 3));
        }
        evidence.put("step_reports", w.reports());

        String message;
        boolean encodingDominates;
        if (split) {
            encodingDominates = encoding >= nz(loader);
            message = String.format(Locale.ROOT,
                    "%s of each %s step is spent before the model runs: data loading %s, text encoder %s, VAE %s",
                    Texts.pct(wait), Texts.secs(stepSeconds), Texts.pct(nz(loader)), Texts.pct(nz(lm)),
                    Texts.pct(nz(vae)));
        } else if (online) {
            encodingDominates = true;
            message = onlineDataTime(run, stepSeconds, wait);
        } else if (spec != null && spec.features() != null) {
            encodingDominates = false;
            message = String.format(Locale.ROOT, "%s of each %s step is spent waiting for the data loader",
                    Texts.pct(wait), Texts.secs(stepSeconds));
        } else {
            // No spec says where the features come from: PixArt's time_data then may or may not hold encoding.
            encodingDominates = false;
            message = String.format(Locale.ROOT, "%s of each %s step is data time: data loading, plus the T5/VAE "
                    + "encoding if the features are computed online (register the run's spec to tell them apart)",
                    Texts.pct(wait), Texts.secs(stepSeconds));
            String loaderAdvice = "otherwise make the input pipeline faster (more DataLoader workers, pin_memory=True, "
                    + "data on local disk)";
            return new Finding(severity(w), message, evidence, "if the text and VAE features are computed online, "
                    + "precompute them once (PixArt: extract T5 and VAE features and set load_vae_feat / "
                    + "load_t5_feat); " + loaderAdvice);
        }
        if (online && run.featuresDefaulted()) {
            message += DEFAULTS_SAID;
        }
        String loaderFix = "make the input pipeline faster: more DataLoader workers (num_workers), "
                + "pin_memory=True and persistent_workers=True, data on local NVMe instead of network storage, "
                + "or decode/resize images ahead of time";
        String suggestion;
        if (encodingDominates && online && run.featuresDefaulted() && !split) {
            // Encoding is only assumed (the model's default): the loader first, the encoding if the run does it.
            suggestion = loaderFix + "; if the run does encode its features online, "
                    + Texts.precomputeFromObserved(run, stepSeconds, wait, Double.NaN, true);
        } else if (encodingDominates) {
            // The saving as this run shows it, not the estimator's figure for a typical run.
            suggestion = Texts.precomputeFromObserved(run, stepSeconds, split ? encoding : wait,
                    split ? nz(loader) : Double.NaN, !split);
        } else {
            suggestion = loaderFix;
        }
        return new Finding(severity(w), message, evidence, suggestion);
    }

    /** Said when the spec left the features to the model's default: the encoding is assumed, not known. */
    static final String DEFAULTS_SAID = " (the spec does not say how the features are made: the model's default,"
            + " online encoding, is assumed)";

    /**
     * The headline for a data timer that holds the loader and the online encoders (PixArt's {@code time_data}):
     * it names encoding as the bulk only when the encoders, priced from this run's own steps, are at least half of
     * it; otherwise it says the wait is mostly the loader's, as the fix then does (one story, not "includes the
     * encoding" above "encoding is 2% of it").
     */
    private static String onlineDataTime(RunContext run, double stepSeconds, double wait) {
        String what = Texts.encoders(run.estimate()).orElse("text/VAE");
        Repricing r = Texts.repricedWithPrecomputedFeatures(run, stepSeconds, wait,
                Double.NaN, true);
        double encoding = r == null ? Double.NaN : stepSeconds - r.stepSeconds();
        if (encoding >= 0 && encoding < 0.5 * wait * stepSeconds) {
            return String.format(Locale.ROOT, "%s of each %s step is data time, mostly waiting for the loader: priced "
                    + "from this run's own steps, the online %s encoding is about %s of its %s", Texts.pct(wait),
                    Texts.secs(stepSeconds), what, Texts.secs(encoding), Texts.secs(wait * stepSeconds));
        }
        return String.format(Locale.ROOT, "%s of each %s step is data time, which includes the online %s encoding "
                + "(features are computed online)", Texts.pct(wait), Texts.secs(stepSeconds), what);
    }

    /**
     * How far back "now" reaches when a step time is quoted or compared with the run's own earlier steps: five usual
     * report gaps, at least 15 s and at most 5 minutes.
     */
    static double recentSeconds(StepSeries steps) {
        double gap = WindowStats.expectedReportGapSeconds(steps);
        return Double.isNaN(gap) ? 60 : Math.max(15, Math.min(300, 5 * gap));
    }
    /** How far back the run's own earlier pace is looked for. */
    static final double EARLIER_SECONDS = 1800;

    /**
     * The step time now: the median of the recent reports ({@link #recentSeconds}, at least the newest three). A message quotes this,
     * not the detection window's median, which lags minutes behind a slowdown.
     */
    static double currentStepSeconds(StepSeries steps, double now) {
        int n = steps.size();
        if (n == 0) {
            return Double.NaN;
        }
        int from = Math.min(steps.firstIndexAtOrAfter(now - recentSeconds(steps)), Math.max(0, n - 3));
        double[] v = new double[n - from];
        for (int i = from; i < n; i++) {
            v[i - from] = steps.timeS(i);
        }
        return Stats.median(v);
    }

    /**
     * The run's own best sustained pace before the recent reports: the lowest median of five consecutive reports in the
     * last half hour; NaN with fewer than five such reports.
     */
    static double earlierStepSeconds(StepSeries steps, double now) {
        int n = steps.size();
        int end = Math.min(steps.firstIndexAtOrAfter(now - recentSeconds(steps)), n - 3);
        int start = steps.firstIndexAtOrAfter(now - EARLIER_SECONDS);
        if (end - start < 5) {
            return Double.NaN;
        }
        // Each report's time read once (not five times), each five sorted in place (Arrays.sort's order).
        double[] times = new double[end - start];
        for (int i = start; i < end; i++) {
            times[i - start] = steps.timeS(i);
        }
        double best = Double.NaN;
        double[] v = new double[5];
        for (int i = 0; i + 5 <= times.length; i++) {
            System.arraycopy(times, i, v, 0, 5);
            for (int a = 1; a < 5; a++) {
                double x = v[a];
                int b = a - 1;
                while (b >= 0 && Double.compare(v[b], x) > 0) {
                    v[b + 1] = v[b];
                    b--;
                }
                v[b + 1] = x;
            }
            double m = v[2];
            if (Double.isNaN(best) || m < best) {
                best = m;
            }
        }
        return best;
    }

    /**
     * No data time in the log: the GPUs' utilisation samples show repeated idle gaps while steps are slower than
     * expected — than the estimate with a spec, else than the run's own earlier steps.
     */
    private Optional<Finding> fromUtilization(RunContext run, double from, boolean active, int reports) {
        Estimate e = run.estimate();
        boolean predicted = e != null && e.stepSeconds() > 0;
        double current = currentStepSeconds(run.steps(), run.now());
        double expected;
        double ratio;
        double gapsFrom;
        if (predicted) {
            expected = e.stepSeconds();
            ratio = WindowStats.medianStepSeconds(run.steps(), from) / expected;
            gapsFrom = from;
        } else {
            // No spec: the run is its own yardstick, and the gaps are looked for since it slowed down.
            expected = earlierStepSeconds(run.steps(), run.now());
            ratio = current / expected;
            gapsFrom = run.now() - recentSeconds(run.steps());
        }
        if (!(ratio > (active ? 1 + (s.slowStepRatio() - 1) / 2 : s.slowStepRatio()))) {
            return Optional.empty();
        }
        int polls = 0;
        int gappy = 0;
        int smDips = 0;
        double idleSum = 0;
        for (GpuSeries g : run.gpus()) {
            // Where the GPU counts its SMs (GPM, over the whole poll interval), a poll whose SM activity falls under
            // half the GPU's working level is a dip between steps, even when the driver's utilisation samples
            // (a few a second, "a kernel ran") miss it.
            double working = smWorkingLevel(g, from);
            for (int i = g.firstIndexAtOrAfter(gapsFrom); i < g.size(); i++) {
                double idle = g.idleFraction(i);
                if (Double.isNaN(idle)) {
                    continue;
                }
                polls++;
                idleSum += idle;
                double sm = g.smActiveRatio(i);
                if (idle >= s.idleGapFraction()) {
                    gappy++;
                } else if (!Double.isNaN(sm) && working > 0.2 && sm < working / 2) {
                    gappy++;
                    smDips++;
                }
            }
        }
        if (polls < 10) {
            return Optional.empty();
        }
        double share = (double) gappy / polls;
        double needed = active ? s.idleGapPollShare() * 0.75 : s.idleGapPollShare();
        if (share < needed) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("polls_with_idle_gaps_ratio", Texts.round(share, 3));
        if (smDips > 0) {
            evidence.put("polls_with_sm_dips_ratio", Texts.round((double) smDips / polls, 3));
        }
        evidence.put("mean_idle_fraction", Texts.round(idleSum / polls, 3));
        evidence.put("step_seconds", Texts.round(current, 3));
        if (predicted) {
            evidence.put("predicted_step_seconds", Texts.round(expected, 3));
            evidence.put("step_time_ratio", Texts.round(ratio, 2));
        } else {
            evidence.put("earlier_step_seconds", Texts.round(expected, 3));
            evidence.put("slowdown_ratio", Texts.round(ratio, 2));
        }
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
            message += DEFAULTS_SAID;
        }
        return Optional.of(new Finding(Severity.WARNING, message, evidence, gapsFix(run, online)));
    }

    /**
     * The fix for idle gaps whose cause the log does not split: precomputing when the spec says the features are
     * encoded online; the loader first when it only left them at the model's default (no cause is named then).
     */
    private static String gapsFix(RunContext run, boolean online) {
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

    private static double nz(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    /** The GPU's working SM activity over the window: its 80th percentile; NaN without counters. */
    private static double smWorkingLevel(GpuSeries g, double from) {
        int first = g.firstIndexAtOrAfter(from);
        double[] v = new double[Math.max(0, g.size() - first)];
        int n = 0;
        for (int i = first; i < g.size(); i++) {
            double sm = g.smActiveRatio(i);
            if (!Double.isNaN(sm)) {
                v[n++] = sm;
            }
        }
        if (n < 5) {
            return Double.NaN;
        }
        Arrays.sort(v, 0, n);
        return v[Math.min(n - 1, (int) Math.floor(0.8 * n))];
    }
}
