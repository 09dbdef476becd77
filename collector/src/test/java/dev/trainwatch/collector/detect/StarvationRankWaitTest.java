package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One rank waiting for its input while the others do not, on rank-data-starved's figures. */
class StarvationRankWaitTest {

    private static final DetectorSettings.DataStarvation S = DetectorSettings.defaults().dataStarvation();

    /** Eight ranks reporting every 4 s step, rank 5 with its own data time. */
    private static FakeRun ranks(Map<String, Double> rankData) {
        Scenario.Steps s = Scenario.load("rank-data-starved").phases().get(1).steps();
        FakeRun run = new FakeRun(1_000);
        List<Integer> ids = new ArrayList<>();
        List<StepSeries> series = new ArrayList<>();
        for (int r = 0; r < s.ranks(); r++) {
            double data = rankData.getOrDefault(Integer.toString(r), s.dataTimeS());
            List<FakeRun.Report> reports = new ArrayList<>();
            for (FakeRun.Report x : FakeRun.reports(s, 20, 1_000, 100)) {
                reports.add(new FakeRun.Report(x.ts(), x.step(), x.timeS(), data, Double.NaN, Double.NaN, 1));
            }
            ids.add(r);
            series.add(new FakeRun.Steps(reports));
        }
        run.ranks = new FakeRun.Ranks(ids, series);
        return run;
    }

    @Test
    void theRankThatWaitsWhileTheOthersDoNotIsNamed() {
        FakeRun run = ranks(Scenario.load("rank-data-starved").phases().get(1).steps().rankDataTimeS());
        StarvationRankWait w = StarvationRankWait.worst(run.ranks(), 700, 2, 30);
        assertThat(w.rank()).isEqualTo(5);
        assertThat(w.rankCount()).isEqualTo(8);
        assertThat(w.reports().share()).isCloseTo(0.45, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(w.standsOut(S.rankWait())).isTrue();
        assertThat(w.finding(run, S.logWait()).message()).startsWith("rank 5 waits for its input 45% of each 4.00 s step")
                .contains("the other 7 ranks wait 0%");
    }

    @Test
    void ranksThatAllWaitAlikeDoNotSingleOneOut() {
        FakeRun run = ranks(Map.of("0", 1.8, "1", 1.8, "2", 1.8, "3", 1.8, "4", 1.8, "5", 1.8, "6", 1.8, "7", 1.8));
        assertThat(StarvationRankWait.worst(run.ranks(), 700, 2, 30).standsOut(S.rankWait())).isFalse();
        assertThat(StarvationRankWait.worst(RankSeries.NONE, 700, 2, 30)).isNull();
    }
}
