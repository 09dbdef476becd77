package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** hung-rank's eight ranks as the stall evidence sees them 60 s after rank 5 stopped. */
final class StallEvidenceFixtures {

    static final double NOW = 10_000;
    /** The other ranks' last report; rank 5's came one report gap (20 s) before. */
    static final double LAST = NOW - 40;

    private StallEvidenceFixtures() {
    }

    static FakeRun hungRank(double rank5Last) {
        Scenario.Steps s = Scenario.load("hung-rank").phases().get(0).steps();
        FakeRun run = new FakeRun(NOW);
        List<Integer> ids = new ArrayList<>();
        List<StepSeries> series = new ArrayList<>();
        Map<Integer, String> gpuOfRank = new LinkedHashMap<>();
        for (int r = 0; r < s.ranks(); r++) {
            ids.add(r);
            series.add(new FakeRun.Steps(FakeRun.reports(s, 10, r == 5 ? rank5Last : LAST, 100)));
            gpuOfRank.put(r, "GPU-" + r);
        }
        run.ranks = new FakeRun.Ranks(ids, series);
        run.gpuOfRank = gpuOfRank;
        return run;
    }

    static RankProcess proc(int rank, String state, double cpuRate) {
        return new RankProcess(rank, "node-1", 100 + rank, "GPU-" + rank, state, cpuRate, 6e9, 4, 8e9, NOW - 1);
    }
}
