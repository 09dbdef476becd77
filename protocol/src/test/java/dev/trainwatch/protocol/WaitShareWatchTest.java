package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.WaitShareWatch.Seen;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What an agent with {@code --ship-every} sends at once from a run's step reports: a rank's reports in a row that
 * wait for data above the collector's warning share (the first also hurries the following polls) until they are two
 * and cover 30 s of steps — what the collector's newest-reports rule reads — and nothing more while it stays there.
 */
class WaitShareWatchTest {

    /** A Sana report: step time and its data, text-encoder and VAE parts. */
    static StepEvent sana(double all, double data, double lm, double vae, Integer rank) {
        return new StepEvent(1L, all, data, null, lm, vae, 1, null, 0.5, 1e-4, 0.1, null, null, rank, 0.0, null);
    }

    static StepEvent pixart(double time, Double data, Integer rank) {
        return new StepEvent(1L, time, data, null, null, null, 10, null, 0.5, 1e-4, 0.1, null, null, rank, 0.0, null);
    }

    @Test
    void theShareIsTheWaitOverTheStepAsTheCollectorReadsIt() {
        // The first step of a real Sana run (shared corpus, sana_derived_mi2v_flow2): all 17.497 s, data 8.075, lm 2.038,
        // vae 1.902; its second step: 9.175 s, 0.001, 0.098, 0.591.
        assertThat(sana(17.497, 8.075, 2.038, 1.902, null).waitShare()).isCloseTo(0.6866, within(1e-4));
        assertThat(sana(9.175, 0.001, 0.098, 0.591, null).waitShare()).isCloseTo(0.0752, within(1e-4));
        assertThat(pixart(4.0, 2.8, null).waitShare()).isCloseTo(0.7, within(1e-12));
        // A part longer than the step counts as the step; the sum is at most the step.
        assertThat(pixart(1.0, 3.0, null).waitShare()).isEqualTo(1.0);
        assertThat(sana(1.0, 0.6, 0.6, 0.0, null).waitShare()).isEqualTo(1.0);
        // No split, no step time: nothing to say.
        assertThat(pixart(4.0, null, null).waitShare()).isNaN();
        assertThat(pixart(0.0, 1.0, null).waitShare()).isNaN();
        assertThat(StepEvent.of(5, 2.0, 0).waitShare()).isNaN();
    }

    @Test
    void aRankTurningStarvedIsNewsTwiceThenNotUntilItRecovers() {
        // PixArt's reports average 10 steps: 40 s of steps each, two cover the span.
        WaitShareWatch watch = new WaitShareWatch();
        assertThat(watch.read(List.of(pixart(1.0, 0.05, null)))).isEqualTo(Seen.NOTHING);
        assertThat(watch.read(List.of())).isEqualTo(Seen.NOTHING);
        assertThat(watch.read(List.of(pixart(4.0, 2.8, null)))).isEqualTo(Seen.TURNED_ABOVE);
        assertThat(watch.read(List.of(pixart(4.0, 2.8, null)))).isEqualTo(Seen.ABOVE);
        assertThat(watch.read(List.of(pixart(4.0, 2.8, null)))).isEqualTo(Seen.NOTHING);
        assertThat(watch.read(List.of(pixart(4.0, 2.9, null)))).isEqualTo(Seen.NOTHING);
        // A report without a split changes nothing; at the share exactly is not above it.
        assertThat(watch.read(List.of(pixart(4.0, null, null)))).isEqualTo(Seen.NOTHING);
        assertThat(watch.read(List.of(pixart(1.0, 0.30, null)))).isEqualTo(Seen.NOTHING);
        assertThat(watch.read(List.of(pixart(4.0, 2.8, null)))).isEqualTo(Seen.TURNED_ABOVE);
        assertThat(Seen.TURNED_ABOVE.urgent()).isTrue();
        assertThat(Seen.ABOVE.urgent()).isTrue();
        assertThat(Seen.NOTHING.urgent()).isFalse();
    }

    @Test
    void eachRankIsWatchedOnItsOwnAndTheMostPressingReportOfAPollWins() {
        WaitShareWatch watch = new WaitShareWatch();
        // Open-Sora prints every rank's line: rank 5 waits, the others do not; they alternate in the log.
        assertThat(watch.read(List.of(pixart(2.0, 0.1, 4), pixart(2.0, 1.5, 5)))).isEqualTo(Seen.TURNED_ABOVE);
        assertThat(watch.read(List.of(pixart(2.0, 0.1, 4)))).isEqualTo(Seen.NOTHING);
        assertThat(watch.read(List.of(pixart(2.0, 1.5, 5), pixart(2.0, 0.1, 4)))).isEqualTo(Seen.ABOVE);
        // Rank 4 turns while rank 5 is in its third: the turn is what the poll says.
        assertThat(watch.read(List.of(pixart(2.0, 1.5, 5), pixart(2.0, 1.5, 4)))).isEqualTo(Seen.TURNED_ABOVE);
        assertThat(watch.read(List.of(pixart(2.0, 1.5, 4), pixart(2.0, 1.5, 5)))).isEqualTo(Seen.ABOVE);
        assertThat(watch.read(List.of(pixart(2.0, 1.5, 4), pixart(2.0, 1.5, 5)))).isEqualTo(Seen.NOTHING);
        // Two reports of one rank in one poll: the second one in a row.
        WaitShareWatch fresh = new WaitShareWatch();
        assertThat(fresh.read(List.of(pixart(2.0, 1.5, null), pixart(2.0, 1.5, null)))).isEqualTo(Seen.TURNED_ABOVE);
        assertThat(fresh.read(List.of(pixart(2.0, 1.5, null)))).isEqualTo(Seen.NOTHING);
    }

    @Test
    void reportsOfOneShortStepEachAreNewsUntilTheyCoverThirtySeconds() {
        WaitShareWatch watch = new WaitShareWatch();
        StepEvent starved = new StepEvent(1L, 4.0, 1.8, null, null, null, null, null, 0.5, 1e-4, 0.1, null, null, 5,
                0.0, null);
        assertThat(watch.read(List.of(starved))).isEqualTo(Seen.TURNED_ABOVE);
        for (int i = 2; i <= 8; i++) { // 4 to 28 s of steps before each of these
            assertThat(watch.read(List.of(starved))).as("report " + i).isEqualTo(Seen.ABOVE);
        }
        assertThat(watch.read(List.of(starved))).isEqualTo(Seen.NOTHING); // 32 s covered
        assertThat(watch.read(List.of(starved))).isEqualTo(Seen.NOTHING);
    }
}
