package dev.trainwatch.collector.detect;

import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Evidence of {@code stalled} from the ranks' own step reports (Open-Sora's timer lines, {@code [rankN]:} prefixes):
 * a rank whose reports stopped one to three report gaps before the other ranks' is the one that hung. A rank that
 * stopped logging long before, while the run went on, is not the one that hung now.
 */
final class StallReports {

    private final DetectorSettings.Stalled.Reports s;

    StallReports(DetectorSettings.Stalled.Reports settings) {
        this.s = settings;
    }

    /** The newest report of any rank, NEGATIVE_INFINITY without any. */
    static double newestTs(RankSeries ranks) {
        return IntStream.range(0, ranks.count()).mapToObj(ranks::steps).filter(r -> r.size() > 0)
                .mapToDouble(r -> r.ts(r.size() - 1)).max().orElse(Double.NEGATIVE_INFINITY);
    }

    void culprits(RunContext run, double gap, Map<Integer, String> hostOfRank, Map<Integer, StallCulprit> out) {
        RankSeries ranks = run.ranks();
        if (ranks.count() < 2) {
            return;
        }
        double newest = newestTs(ranks);
        double unit = Math.max(gap, s.minGapSeconds());
        for (int k = 0; k < ranks.count(); k++) {
            StepSeries r = ranks.steps(k);
            double last = r.size() > 0 ? r.ts(r.size() - 1) : Double.NaN;
            if (last < newest - unit && last >= newest - s.withinGaps() * unit) {
                int rank = ranks.rank(k);
                out.put(rank, new StallCulprit(rank, hostOfRank.get(rank), String.format(Locale.ROOT,
                        "its last report was step %d, %s before the other ranks' last", r.step(r.size() - 1),
                        Texts.secs(newest - last)), false));
            }
        }
    }
}
