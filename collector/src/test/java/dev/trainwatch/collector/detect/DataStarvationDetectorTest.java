package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A run that pushes PixArt-style steps with no spec registered: the data time cannot be split. */
class DataStarvationDetectorTest {

    @Test
    void withoutASpecTheMessageSaysWhatTheDataTimeMayHold() {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        for (int i = 1; i <= 20; i++) {
            clock.advance(Duration.ofSeconds(20));
            fleet.ingestSteps("no-spec", List.of(new StepEvent((long) i * 2, 10.0, 4.0, null, null, null, 2, null,
                    null, null, null, null, null, null, clock.seconds(), null)));
            fleet.tick();
        }
        Anomaly a = fleet.run("no-spec").orElseThrow().anomalies().get(0);
        assertThat(a.kind()).isEqualTo(AnomalyKind.DATA_STARVATION);
        assertThat(a.severity()).isEqualTo(Severity.WARNING);
        assertThat(a.message()).contains("40% of each 10 s step is data time")
                .contains("register the run's spec");
        assertThat(a.suggestion()).contains("precompute").contains("DataLoader workers");
    }

    @Test
    void aSpecLeftAtTheModelsDefaultsIsSaidToBeDefaults() {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = Fleet.create(Estimator.bundled(), clock);
        // DiT's recipe encodes its VAE latents online; the spec says nothing about the features.
        fleet.putSpec("dit", new RunSpec("dit-xl-2", "a100-80gb", 1, 32, 256, null, null, null,
                "bf16", null, null, null, null, null, null, null, null));
        double step = fleet.run("dit").orElseThrow().estimate().stepSeconds() * 3;
        for (int i = 1; i <= 20; i++) {
            clock.advance(Duration.ofSeconds(20));
            fleet.ingestSteps("dit", List.of(new StepEvent((long) i * 10, step, step * 0.6, null, null, null, 10, null,
                    null, null, null, null, null, null, clock.seconds(), null)));
            fleet.tick();
        }
        Anomaly a = fleet.run("dit").orElseThrow().anomalies().stream()
                .filter(x -> x.kind() == AnomalyKind.DATA_STARVATION).findFirst().orElseThrow();
        assertThat(a.message()).endsWith(DataStarvationDetector.DEFAULTS_SAID);
        // Encoding is assumed, not seen: the loader comes first, the encoders only "if the run does encode".
        assertThat(a.suggestion()).startsWith("make the input pipeline faster")
                .contains("if the run does encode its features online");
    }

    /** Step reports every {@code gap} s with the given step times, the newest at {@code now}. */
    private record Reports(double now, double gap, double[] times) implements QuietRun.FixtureSteps {
        @Override public int size() { return times.length; }
        @Override public double ts(int i) { return now - (times.length - 1 - i) * gap; }
        @Override public long step(int i) { return i + 1; }
        @Override public double timeS(int i) { return times[i]; }
        @Override public double dataTimeS(int i) { return Double.NaN; }
        @Override public double lmTimeS(int i) { return Double.NaN; }
        @Override public double vaeTimeS(int i) { return Double.NaN; }
        @Override public int intervalSteps(int i) { return 1; }
        @Override public double samples(int i) { return Double.NaN; }
        @Override public int rank(int i) { return -1; }
        @Override public int bucketHeight(int i) { return -1; }
        @Override public int bucketWidth(int i) { return -1; }
    }

    /**
     * The run's best earlier pace (the lowest median of five consecutive reports before the recent ones) is what the
     * plain reading of that definition gives — medians taken by sorting each five — on random runs, ties, a
     * slowdown and fewer than five reports.
     */
    @Test
    void theEarlierPaceIsTheLowestMedianOfFiveConsecutiveReports() {
        java.util.Random random = new java.util.Random(24);
        int found = 0;
        for (int round = 0; round < 2_000; round++) {
            int n = random.nextInt(600);
            double[] times = new double[n];
            for (int i = 0; i < n; i++) {
                times[i] = random.nextInt(4) == 0 ? 1.0 + random.nextInt(3) : 0.5 + random.nextDouble() * 4;
            }
            Reports steps = new Reports(1_000_000, 1 + random.nextInt(30), times);
            double now = steps.now() + random.nextInt(20);
            int end = Math.min(steps.firstIndexAtOrAfter(now - DataStarvationDetector.recentSeconds(steps)), n - 3);
            int start = steps.firstIndexAtOrAfter(now - DataStarvationDetector.EARLIER_SECONDS);
            double expected = Double.NaN;
            for (int i = start; i + 5 <= end; i++) {
                double[] five = java.util.Arrays.copyOfRange(times, i, i + 5);
                java.util.Arrays.sort(five);
                if (Double.isNaN(expected) || five[2] < expected) {
                    expected = five[2];
                }
            }
            assertThat(Double.valueOf(DataStarvationDetector.earlierStepSeconds(steps, now))).as("round %d", round)
                    .isEqualTo(Double.valueOf(expected)); // NaN (fewer than five) equals NaN here
            found += Double.isNaN(expected) ? 0 : 1;
        }
        assertThat(found).as("rounds with an earlier pace").isGreaterThan(1_000);
    }
}
