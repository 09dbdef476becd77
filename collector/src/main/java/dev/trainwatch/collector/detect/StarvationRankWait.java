package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Evidence of one data-starved rank, where ranks report their own data times (Open-Sora's {@code record_time} lines
 * give every rank's {@code load_data}): the rank that waits longest, against the other ranks' median. Every rank
 * waits for it at the gradient all-reduce, so the run loses its wait although the lead rank's log shows none.
 *
 * @param reports      the rank's own newest reports
 * @param othersMedian the other ranks' median wait share
 * @param rankCount    ranks with enough reports of their own
 */
record StarvationRankWait(StarvationLogWait reports, int rank, double othersMedian, int rankCount) {

    /** The rank that waits most, among ranks with their own newest reports; null with fewer than two of them. */
    static StarvationRankWait worst(RankSeries ranks, double from, int minReports, double spanSeconds) {
        List<StarvationLogWait> byRank = new ArrayList<>();
        List<Integer> rankIds = new ArrayList<>();
        for (int k = 0; k < ranks.count(); k++) {
            StarvationLogWait w = StarvationLogWait.newest(ranks.steps(k), from, minReports, spanSeconds);
            if (w != null) {
                byRank.add(w);
                rankIds.add(ranks.rank(k));
            }
        }
        if (byRank.size() < 2) {
            return null;
        }
        int worst = IntStream.range(0, byRank.size())
                .reduce((a, b) -> byRank.get(b).share() > byRank.get(a).share() ? b : a).orElseThrow();
        double[] others = IntStream.range(0, byRank.size()).filter(i -> i != worst)
                .mapToDouble(i -> byRank.get(i).share()).toArray();
        return new StarvationRankWait(byRank.get(worst), rankIds.get(worst), Stats.median(others), byRank.size());
    }

    /** The others hardly wait: this rank's input is the problem, not the pipeline all ranks share. */
    boolean standsOut(DetectorSettings.RankWait s) {
        return othersMedian < reports.share() * s.othersShareOf();
    }

    Finding finding(RunContext run, DetectorSettings.LogWait s) {
        return reports.rankFinding(run, s, rank, othersMedian, rankCount);
    }
}
