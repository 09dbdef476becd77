package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A rank whose own reports stopped first (hung-rank: reports every 20 s, rank 5 misses the last one). */
class StallReportsTest {

    private final StallReports reports = new StallReports(DetectorSettings.defaults().stalled().reports());

    private Map<Integer, StallCulprit> culprits(double rank5Last) {
        Map<Integer, StallCulprit> out = new LinkedHashMap<>();
        reports.culprits(StallEvidenceFixtures.hungRank(rank5Last), 20, Map.of(5, "node-1"), out);
        return out;
    }

    @Test
    void theRankThatStoppedAReportGapBeforeTheOthersIsNamed() {
        Map<Integer, StallCulprit> out = culprits(StallEvidenceFixtures.LAST - 25);
        assertThat(out).containsOnlyKeys(5);
        assertThat(out.get(5).why()).isEqualTo("its last report was step 145, 25 s before the other ranks' last");
        assertThat(out.get(5).host()).isEqualTo("node-1");
        assertThat(StallReports.newestTs(StallEvidenceFixtures.hungRank(0).ranks())).isEqualTo(StallEvidenceFixtures.LAST);
    }

    @Test
    void aRankThatStoppedLoggingLongBeforeOrWithTheOthersIsNotTheOneThatHungNow() {
        assertThat(culprits(StallEvidenceFixtures.LAST - 200)).isEmpty();
        assertThat(culprits(StallEvidenceFixtures.LAST)).isEmpty();
    }
}
