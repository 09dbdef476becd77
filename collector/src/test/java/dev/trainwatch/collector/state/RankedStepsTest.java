package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RankView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.state.window.RankBudget;
import dev.trainwatch.collector.state.window.RankWindows;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs whose every rank reports each step (Open-Sora's {@code record_time} timer lines, torchrun's
 * {@code [rankN]:} prefixes): the run's series counts each step once, from the lead rank, and the ranks' own
 * reports still tell a data-starved or slow rank apart.
 */
class RankedStepsTest {

    private static final int RANKS = 8;
    /** Ranks in the order their lines land in a shared console log: not sorted, rank 0 not first. */
    private static final int[] ARRIVAL = {3, 6, 0, 1, 7, 4, 2, 5};

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    /** Open-Sora-like: 8 GPUs, 4 videos each per step. FakePredictor: 4/8 × 1 s + 1.5 s online encoding = 2 s. */
    private static RunSpec spec() {
        return new RunSpec("opensora-2.0", "a100-80gb", RANKS, 4, 1024, null, null, null, "bf16", "adamw", true,
                false, "online", 0, null, null, 10_000L);
    }

    /**
     * One Open-Sora timer line per rank for each step, as the agent parses them: {@code load_data} as data time,
     * {@code encode_video}/{@code encode_text} as VAE/text-encoder time, the step's top-level spans as its time.
     * Every rank's step ends at the same all-reduce, so their totals agree to within the timer's rounding.
     *
     * @param starvedRank a rank whose {@code load_data} is {@code starvedData} s (its iter shrinks by the same,
     *                    the others' iter grows: they wait for it), -1 for none
     * @return per step, the reports counted as the run's steps
     */
    private List<List<StepEvent>> play(int steps, double stepSeconds, int starvedRank, double starvedData) {
        List<List<StepEvent>> counted = new ArrayList<>();
        for (int s = 1; s <= steps; s++) {
            clock.advanceSeconds(stepSeconds);
            List<StepEvent> batch = new ArrayList<>();
            for (int rank : ARRIVAL) {
                double loadData = rank == starvedRank ? starvedData : 0.01;
                double time = stepSeconds + 0.01 * (rank % 3); // the timers' rounding differs a little per rank
                batch.add(new StepEvent((long) s, time, loadData, time - loadData - 0.8, 0.2, 0.6, 1, null, null,
                        null, null, null, null, rank, clock.seconds(), null));
            }
            counted.add(fleet.ingestSteps("opensora", batch));
        }
        return counted;
    }

    @Test
    void anEightRankOpenSoraLogCountsEachStepOnceWithTheTrueStepTimeAndThroughput() {
        fleet.putSpec("opensora", spec());
        List<List<StepEvent>> counted = play(120, 4.0, -1, 0);

        // Each step counted once. The first step comes from whichever rank's line came first (rank 3: then the
        // only rank known); from then on, rank 0's.
        assertThat(counted).extracting(List::size).containsOnly(1);
        assertThat(counted.get(0).get(0).rank()).isEqualTo(3);
        assertThat(counted.subList(1, counted.size())).extracting(step -> step.get(0).rank()).containsOnly(0);
        RunView run = fleet.run("opensora").orElseThrow();
        // Rank 0's time: the step time, not a mixture; 32 videos per 4 s step, not 8 × that.
        assertThat(run.observed().stepSeconds()).isEqualTo(4.0);
        assertThat(run.observed().samplesPerSecond()).isCloseTo(4.0 * RANKS / 4.0, within(1e-9));
        assertThat(run.observed().lastStep()).isEqualTo(120);
        assertThat(run.comparison().stepTimeRatio()).isCloseTo(4.0 / 2.0, within(1e-9));
        assertThat(run.comparison().etaSeconds()).isCloseTo((10_000 - 120) * 4.0, within(1e-6));
        assertThat(run.observed().dataWaitRatio()).isCloseTo(0.01 / 4.01, within(1e-3));
        // Healthy ranks: nobody is named.
        assertThat(active(run, AnomalyKind.STRAGGLER)).isNull();
        assertThat(active(run, AnomalyKind.DATA_STARVATION)).isNull();
        // Each step once in the run's window: the 10-minute window spans 150 steps, not 150 / 8.
        assertThat(fleet.summary("opensora").orElseThrow().lastStep()).isEqualTo(120);
    }

    @Test
    void aRunThatIsHungIsStalledEvenThoughEveryRankReported() {
        play(30, 4.0, -1, 0);
        clock.advanceSeconds(300);
        fleet.tick();
        Anomaly stalled = active(fleet.run("opensora").orElseThrow(), AnomalyKind.STALLED);
        assertThat(stalled).isNotNull();
        assertThat(stalled.evidence()).containsEntry("last_step", 30L);
        // The expected gap between reports is one step (4 s), not 4 s / 8.
        assertThat(stalled.evidence().get("expected_report_gap_seconds")).isEqualTo(4.0);
    }

    @Test
    void whenRankZerosReportsStopWhileTheOthersGoOnTheRunIsNotStalledAndEachStepStillCountsOnce() {
        play(30, 4.0, -1, 0);
        // Rank 0's log (or its node's agent) goes quiet; ranks 1-7 keep reporting for five more minutes.
        List<Integer> countedFrom = new ArrayList<>();
        int counted = 0;
        for (int s = 31; s <= 105; s++) {
            clock.advanceSeconds(4.0);
            List<StepEvent> batch = new ArrayList<>();
            for (int rank : ARRIVAL) {
                if (rank != 0) {
                    batch.add(new StepEvent((long) s, 4.0, 0.01, null, null, null, 1, null, null, null, null, null,
                            null, rank, clock.seconds(), null));
                }
            }
            List<StepEvent> c = fleet.ingestSteps("opensora", batch);
            counted += c.size();
            c.forEach(e -> countedFrom.add(e.rank()));
            fleet.tick();
        }
        RunView run = fleet.run("opensora").orElseThrow();
        assertThat(active(run, AnomalyKind.STALLED)).isNull();
        assertThat(run.anomalies()).noneMatch(a -> a.kind() == AnomalyKind.STALLED);
        // The lead passed to rank 1 once rank 0 had been silent for a minute: steps 31-45 (60 s) are not in the
        // run's series, every step after it is, once.
        assertThat(countedFrom).containsOnly(1);
        assertThat(counted).isEqualTo(105 - 46 + 1);
        assertThat(run.observed().lastStep()).isEqualTo(105);
        assertThat(run.observed().stepSeconds()).isEqualTo(4.0);
    }

    @Test
    void aDataStarvedRankIsNamedAndTheRunsDataWaitIsThatRanksWait() {
        fleet.putSpec("opensora", spec());
        // Rank 5 waits 1.8 s of each 4 s step for its batch; every other rank waits for rank 5 at the all-reduce.
        play(120, 4.0, 5, 1.8);

        RunView run = fleet.run("opensora").orElseThrow();
        assertThat(run.observed().stepSeconds()).isEqualTo(4.0);
        assertThat(run.observed().dataWaitRatio()).isCloseTo(1.8 / 4.02, within(1e-3));
        Anomaly starved = active(run, AnomalyKind.DATA_STARVATION);
        assertThat(starved).as("data_starvation in %s", run.anomalies()).isNotNull();
        assertThat(starved.evidence()).containsEntry("rank", 5).containsEntry("ranks", 8);
        assertThat((double) starved.evidence().get("loader_wait_ratio")).isCloseTo(0.448, within(1e-3));
        assertThat((double) starved.evidence().get("others_median_data_wait_ratio")).isCloseTo(0.81 / 4.01, within(2e-3));
        assertThat((double) starved.evidence().get("data_wait_ratio")).isCloseTo((1.8 + 0.8) / 4.02, within(1e-3));
        // The step quoted is rank 5's own (its newest reports), of which it waits 65%: 2.6 s of 4.02 s.
        assertThat(starved.message()).isEqualTo("rank 5 waits for its input 65% of each 4.02 s step (data loading "
                + "45%, text encoder 5%, VAE 15%) where the other 7 ranks wait 20%: every rank waits for it at the "
                + "gradient all-reduce");
        assertThat(starved.severity()).isEqualTo(dev.trainwatch.collector.detect.Severity.CRITICAL);
        assertThat(starved.suggestion()).startsWith("look at rank 5's input");
        // The per-rank breakdown in the run view shows it too.
        assertThat(run.observed().ranks()).extracting(RankView::rank).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        RankView rank0 = run.observed().ranks().get(0);
        assertThat(rank0.lead()).isTrue();
        assertThat(rank0.stepSeconds()).isEqualTo(4.0);
        assertThat(rank0.dataWaitRatio()).isCloseTo(0.01 / 4.0, within(1e-9));
        assertThat(rank0.reports()).isEqualTo(RankWindows.ENTRIES_PER_RANK);
        assertThat(rank0.lastStep()).isEqualTo(120);
        RankView rank5 = run.observed().ranks().get(5);
        assertThat(rank5.lead()).isNull();
        assertThat(rank5.stepSeconds()).isCloseTo(4.02, within(1e-9));
        assertThat(rank5.dataWaitRatio()).isCloseTo(1.8 / 4.02, within(1e-9));
        assertThat(rank5.vaeRatio()).isCloseTo(0.6 / 4.02, within(1e-9));
    }

    @Test
    void aRankWhoseOwnStepTimeIsLongerIsTheStraggler() {
        for (int s = 1; s <= 120; s++) {
            clock.advanceSeconds(4.0);
            List<StepEvent> batch = new ArrayList<>();
            for (int rank : ARRIVAL) {
                batch.add(new StepEvent((long) s, rank == 6 ? 6.0 : 4.0, null, null, null, null, 1, null, null,
                        null, null, null, null, rank, clock.seconds(), null));
            }
            fleet.ingestSteps("slow", batch);
        }
        RunView run = fleet.run("slow").orElseThrow();
        assertThat(run.observed().stepSeconds()).isEqualTo(4.0);
        Anomaly straggler = active(run, AnomalyKind.STRAGGLER);
        assertThat(straggler).isNotNull();
        assertThat(straggler.evidence()).containsEntry("rank", 6).containsEntry("ranks", 8);
        assertThat(straggler.message()).startsWith("rank 6 takes 6.00 s per step where the other 7 ranks take 4.00 s");
    }

    @Test
    void rankLessAndSingleRankReportsAreCountedAsBefore() {
        // A script pushing its own steps, with the same step twice: both count, as they always did.
        assertThat(fleet.ingestSteps("pushed", List.of(StepEvent.of(1, 2.0, clock.seconds()),
                StepEvent.of(1, 2.0, clock.seconds()), StepEvent.of(2, 2.0, clock.seconds())))).hasSize(3);
        // A single-GPU run under torchrun: every report names rank 0, every report counts.
        List<StepEvent> rank0 = new ArrayList<>();
        for (int s = 1; s <= 5; s++) {
            rank0.add(new StepEvent((long) s, 1.5, 0.1, null, null, null, 1, null, null, null, null, null, null, 0,
                    clock.seconds(), null));
        }
        assertThat(fleet.ingestSteps("single", rank0)).hasSize(5);
        assertThat(fleet.run("single").orElseThrow().observed().dataWaitRatio()).isCloseTo(0.1 / 1.5, within(1e-9));
        assertThat(fleet.run("single").orElseThrow().observed().ranks()).isNull();
        assertThat(fleet.run("pushed").orElseThrow().observed().ranks()).isNull();
    }

    @Test
    void theSameStepFromTheBarAndFromRankZerosTimerLineCountsOnce() {
        // Open-Sora's first bar frame (no rank) and rank 0's timer line both say step 1.
        double t = clock.seconds();
        List<StepEvent> counted = fleet.ingestSteps("bar", List.of(StepEvent.of(1, 9.38, t),
                new StepEvent(1L, 3.96, 0.01, null, null, null, 1, null, null, null, null, null, null, 0, t, null),
                new StepEvent(1L, 3.98, 0.01, null, null, null, 1, null, null, null, null, null, null, 1, t, null),
                new StepEvent(2L, 3.97, 0.0, null, null, null, 1, null, null, null, null, null, null, 0, t, null)));
        assertThat(counted).extracting(StepEvent::step).containsExactly(1L, 2L);
    }

    @Test
    void aNodeReplayingItsSpoolAfterANetworkBlipDoesNotCountStepsTwice() {
        // Two nodes, each with its own agent: ranks 0-1 and ranks 8-9, a step every 3 s.
        int counted = 0;
        double t = clock.seconds();
        for (int s = 1; s <= 10; s++) {
            clock.advanceSeconds(3);
            counted += fleet.ingestSteps("two-nodes", reports(s, t + 3 * s, 0, 1, 8, 9)).size();
        }
        // Node A's agent loses the collector for 90 s and spools; node B's keeps reporting steps 11-40, and rank 8
        // takes the lead once rank 0 has been silent for a minute.
        for (int s = 11; s <= 40; s++) {
            clock.advanceSeconds(3);
            counted += fleet.ingestSteps("two-nodes", reports(s, t + 3 * s, 8, 9)).size();
        }
        // Node A is back and sends its spool: steps 11-40 of ranks 0-1, stamped when they happened. Rank 0 leads
        // again, but those steps were counted already.
        for (int s = 11; s <= 40; s++) {
            counted += fleet.ingestSteps("two-nodes", reports(s, t + 3 * s, 0, 1)).size();
        }
        for (int s = 41; s <= 45; s++) {
            clock.advanceSeconds(3);
            counted += fleet.ingestSteps("two-nodes", reports(s, t + 3 * s, 0, 1, 8, 9)).size();
        }
        // Steps 11-30 fell in the minute before the lead passed: counted by nobody, as when a lead falls silent.
        assertThat(counted).isEqualTo(45 - 20);
        assertThat(fleet.run("two-nodes").orElseThrow().observed().lastStep()).isEqualTo(45);
    }

    private static List<StepEvent> reports(long step, double ts, int... ranks) {
        List<StepEvent> out = new ArrayList<>();
        for (int rank : ranks) {
            out.add(new StepEvent(step, 3.0, 0.01, null, null, null, 1, null, null, null, null, null, null, rank, ts, null));
        }
        return out;
    }

    @Test
    void theLeadPassesToTheLowestRankStillReportingAndComesBack() {
        RankWindows ranks = new RankWindows(600, new RankBudget(Integer.MAX_VALUE));
        double t = 1_000;
        assertThat(ranks.add(report(1, 2, t), t)).isTrue(); // the only rank so far leads
        assertThat(ranks.add(report(1, 0, t), t)).isTrue(); // a lower rank takes over
        assertThat(ranks.add(report(1, 1, t), t)).isFalse();
        assertThat(ranks.lead()).isZero();
        // Rank 0's log stops; ranks 1 and 2 go on. Within a minute rank 0 keeps the lead (a slow flush is not a loss).
        assertThat(ranks.add(report(2, 1, t + 30), t + 30)).isFalse();
        assertThat(ranks.add(report(3, 1, t + 61), t + 61)).isTrue();
        assertThat(ranks.add(report(3, 2, t + 61), t + 61)).isFalse();
        assertThat(ranks.lead()).isEqualTo(1);
        // Rank 0 reports again: it leads again.
        assertThat(ranks.add(report(4, 0, t + 65), t + 65)).isTrue();
        assertThat(ranks.add(report(4, 1, t + 65), t + 65)).isFalse();
        assertThat(ranks.count()).isEqualTo(3);
        assertThat(ranks.steps(0).size()).isEqualTo(2);
        // A rank gone for the whole window is forgotten.
        ranks.trim(t + 64 + 600);
        assertThat(ranks.count()).isEqualTo(2);
        assertThat(ranks.rank(0)).isZero();
    }

    @Test
    void theRanksTrackedPerRunAreBoundedAndALiveRankIsNeverDroppedForANewOne() {
        RankWindows ranks = new RankWindows(600, new RankBudget(Integer.MAX_VALUE));
        for (int r = RankWindows.MAX_RANKS + 40; r >= 1; r--) {
            ranks.add(report(1, r, 10), 10);
        }
        // The first MAX_RANKS ranks to report hold the slots; the 40 after them are refused, not swapped in.
        assertThat(ranks.count()).isEqualTo(RankWindows.MAX_RANKS);
        assertThat(ranks.rank(0)).isEqualTo(41);
        assertThat(ranks.rank(RankWindows.MAX_RANKS - 1)).isEqualTo(RankWindows.MAX_RANKS + 40);
        assertThat(ranks.refused()).isEqualTo(40);
        ranks.add(report(1, 0, 20), 20);
        assertThat(ranks.rank(0)).as("every tracked rank reported 10 s ago: rank 0 waits").isEqualTo(41);
        assertThat(ranks.refused()).isEqualTo(41);

        // Everyone but rank 41 goes quiet; ten minutes later rank 0 takes the slot of the one silent longest.
        for (int i = 0; i < 100; i++) {
            ranks.add(report(2 + i, 41, 11 + i), 11 + i);
        }
        assertThat(ranks.steps(0).size()).isEqualTo(RankWindows.ENTRIES_PER_RANK);
        ranks.add(report(2, 0, 10 + Slots.SILENT_SECONDS), 10 + Slots.SILENT_SECONDS);
        assertThat(ranks.count()).isEqualTo(RankWindows.MAX_RANKS);
        assertThat(ranks.rank(0)).isZero();
        assertThat(ranks.rank(1)).as("the live rank kept its slot").isEqualTo(41);
    }

    private static StepEvent report(long step, int rank, double ts) {
        return new StepEvent(step, 1.0, null, null, null, null, 1, null, null, null, null, null, null, rank, ts, null);
    }

    private static Anomaly active(RunView run, AnomalyKind kind) {
        return run.anomalies().stream().filter(a -> a.kind() == kind && a.active()).findFirst().orElse(null);
    }
}
