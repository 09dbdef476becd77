package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * Evidence of {@code data_starvation} from the newest report alone, confirmed by the GPUs: it waits above the warning
 * share, the run's GPUs show idle gaps through its steps and go on showing them for {@code gpuConfirm} after it was
 * written, and did not before its steps. A log that reports seldom (every 5 steps of 4 s) is then named one report
 * after the fault plus a few seconds. One long wait (an epoch boundary, a cold shard) is one report too, but the GPUs
 * are busy again once it was written, so it raises nothing.
 */
final class StarvationGpuConfirmation {

    private final DetectorSettings.GpuConfirm s;

    StarvationGpuConfirmation(DetectorSettings.GpuConfirm settings) {
        this.s = settings;
    }

    Optional<Finding> evaluate(RunContext run, double from, DetectorSettings.LogWait logWait) {
        StepSeries steps = run.steps();
        StarvationLogWait newest = StarvationLogWait.newest(steps, from, 1, 0);
        if (newest == null || !(newest.medianReport() > logWait.waitWarningRatio())) {
            return Optional.empty();
        }
        // The report read: the newest one that says how long it waited (a rank's line without the split may follow).
        int last = steps.size() - 1;
        while (last >= 0 && !StarvationLogWait.hasWait(steps, last)) {
            last--;
        }
        if (last < 0) {
            return Optional.empty();
        }
        double writtenAt = steps.ts(last);
        double since = run.now() - writtenAt;
        double evenGapsConfirm = s.gpuConfirmEvenGaps().toMillis() / 1000.0;
        if (since < evenGapsConfirm) {
            return Optional.empty();
        }
        double spanStart = writtenAt - steps.timeS(last) * Math.max(1, steps.intervalSteps(last));
        // Gaps all through the report's steps (a starved loop) need only a glance after it; gaps bunched in one
        // stretch of it (one long wait) need the full confirmation, which the busy GPUs after such a wait deny.
        boolean throughout = gapsThroughout(run, spanStart, writtenAt, steps.timeS(last));
        if (since < (throughout ? evenGapsConfirm : s.gpuConfirm().toMillis() / 1000.0)) {
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
        Finding f = newest.finding(run, logWait);
        Map<String, Object> evidence = new LinkedHashMap<>(f.evidence());
        evidence.put("polls_with_idle_gaps_during_report_ratio", Texts.round(during, 3));
        evidence.put("idle_gaps_all_through_report", throughout);
        evidence.put("polls_with_idle_gaps_since_report_ratio", Texts.round(after, 3));
        evidence.put("seconds_since_report", Texts.round(since, 1));
        return Optional.of(new Finding(f.severity(), f.message() + String.format(Locale.ROOT,
                "; the GPUs idled between %s steps (%s of polls) and have since (%s of polls in the last %s)",
                throughout ? "all its" : "its", Texts.pct(during), Texts.pct(after), Texts.secs(since)), evidence,
                f.suggestion()));
    }

    /**
     * Whether the run's GPUs idled between steps all through [from, to): cut into parts of at least {@code
     * evenGapPartSteps} steps, every part has a poll with an idle gap and a poll with work. A starved loop waits before
     * every step; one long wait leaves whole parts idle and others without a gap. False when the span is too short.
     */
    boolean gapsThroughout(RunContext run, double from, double to, double stepSeconds) {
        int parts = (int) Math.min(s.evenGapMaxParts(), Math.floor((to - from) / (s.evenGapPartSteps() * stepSeconds)));
        if (!(stepSeconds > 0) || parts < s.evenGapParts()) {
            return false;
        }
        double part = (to - from) / parts;
        boolean[] gap = new boolean[parts];
        boolean[] work = new boolean[parts];
        for (GpuSeries g : run.gpus()) {
            for (int i = g.firstIndexAtOrAfter(from); i < g.size() && g.ts(i) < to; i++) {
                double idle = g.reading(Reading.IDLE_FRACTION, i);
                if (!Double.isNaN(idle)) {
                    int k = Math.min(parts - 1, (int) ((g.ts(i) - from) / part));
                    gap[k] |= idle >= s.idleGapFraction();
                    work[k] |= idle <= 1 - s.idleGapFraction();
                }
            }
        }
        return IntStream.range(0, parts).allMatch(k -> gap[k] && work[k]);
    }

    /** The share of the run's GPU polls in [from, to) whose buffered samples show an idle gap; NaN without any. */
    double gappyShare(RunContext run, double from, double to) {
        int polls = 0;
        int gappy = 0;
        for (GpuSeries g : run.gpus()) {
            for (int i = g.firstIndexAtOrAfter(from); i < g.size() && g.ts(i) < to; i++) {
                double idle = g.reading(Reading.IDLE_FRACTION, i);
                if (!Double.isNaN(idle)) {
                    polls++;
                    gappy += idle >= s.idleGapFraction() ? 1 : 0;
                }
            }
        }
        return polls == 0 ? Double.NaN : (double) gappy / polls;
    }
}
