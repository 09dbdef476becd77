package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.StepEvent;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What reaches the collector: only events its input validation accepts, each step of each rank once. */
class StepExtractorTest {

    private final StepExtractor extractor = new StepExtractor(StepLineParsers.forFormat(
            "step (?<step>-?\\d+) time (?<time>-?[0-9.]+)(?: lr (?<lr>\\S+))?(?: h (?<height>\\d+))?"
                    + "(?: rank (?<rank>\\d+))?(?: data (?<data_time>\\S+))?"), ZoneOffset.UTC);

    private List<StepEvent> feed(String... lines) {
        List<StepEvent> out = new ArrayList<>();
        for (String line : lines) {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            extractor.accept(bytes, 0, bytes.length, 1_700_000_000.0, out, new ArrayList<>());
        }
        return out;
    }

    @Test
    void zeroTimeIsNotSent() {
        assertThat(feed("step 5 time 0.000")).isEmpty();
        // With a predecessor the time comes from the timestamps instead.
        List<StepEvent> derived = feed("2024-05-01 12:00:00,000 step 10 time 1.0",
                "2024-05-01 12:00:20,000 step 20 time 0.000");
        assertThat(derived).hasSize(2);
        assertThat(derived.get(1).timeS()).isEqualTo(2.0);
    }

    @Test
    void valuesTheCollectorWouldRefuseAreLeftOut() {
        StepEvent e = feed("step 7 time 1.5 lr 2e7 h 0 rank 3 data 90000").get(0);
        assertThat(e.timeS()).isEqualTo(1.5);
        assertThat(e.lr()).isNull();
        assertThat(e.bucketHeight()).isNull();
        assertThat(e.dataTimeS()).isNull();
        assertThat(e.rank()).isEqualTo(3);
        assertThat(feed("step 8 time 100000")).isEmpty();
    }

    @Test
    void eachStepOfEachRankOnce() {
        List<StepEvent> out = feed("step 1 time 1.0 rank 0", "step 1 time 1.0 rank 1", "step 1 time 1.0 rank 0",
                "[rank2]: step 1 time 1.0", "step 2 time 1.0 rank 0");
        assertThat(out).extracting(StepEvent::step, StepEvent::rank)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1L, 0), org.assertj.core.groups.Tuple.tuple(1L, 1),
                        org.assertj.core.groups.Tuple.tuple(1L, 2), org.assertj.core.groups.Tuple.tuple(2L, 0));
    }

    @Test
    void aLineTimestampOutsideUnixSecondsFallsBackToTheReadTime() {
        assertThat(feed("9999-12-31 23:59:59,000 step 3 time 1.0").get(0).ts()).isEqualTo(1_700_000_000.0);
    }
}
