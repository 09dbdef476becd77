package dev.trainwatch.collector.series;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The series of a run as the fleet builds it from its real windows. */
class SeriesBuilderTest {

    private static final String RUN = "series-run";
    private static final long GIB = 1L << 30;

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    private final Map<String, Long> seqs = new java.util.HashMap<>();

    private static String uuid(String host, int i) {
        return "GPU-" + host + "-" + i;
    }

    /** One poll of {@code used.length} GPUs of {@code host}, stamped now, all attributed to {@code runId}. */
    private void poll(String host, String runId, long[] used, double util) {
        double ts = clock.seconds();
        List<GpuSample> gpus = new ArrayList<>();
        List<String> uuids = new ArrayList<>();
        for (int i = 0; i < used.length; i++) {
            gpus.add(Samples.gpu(ts, i, uuid(host, i), used[i], util));
            uuids.add(uuid(host, i));
        }
        long seq = seqs.merge(host, 1L, Long::sum);
        fleet.ingestBatch(Samples.batch(host, host + "-agent", seq, gpus,
                runId == null ? List.of() : List.of(Samples.attribution(runId, uuids)), List.of()));
    }

    private void step(long step, double timeS, Double dataS, Double loss) {
        fleet.ingestSteps(RUN, List.of(new StepEvent(step, timeS, dataS, null, null, null, 10, 96.0, loss, null,
                null, null, null, null, clock.seconds(), null)));
    }

    private RunSeries series(Double since, int maxPoints, boolean gpus) {
        return SeriesBuilder.series(fleet, RUN, new SeriesRequest(since, maxPoints, gpus)).orElseThrow();
    }

    @Test
    void onlineEncodingReportedApartFromDataTimeIsItsOwnShare() {
        // Sana's log splits the text encoder (lm) and the VAE from data time; PixArt's and DiT's do not.
        for (int t = 0; t < 30; t++) {
            poll("node-a", RUN, new long[] {30 * GIB}, 0.9);
            if (t % 10 == 9) {
                fleet.ingestSteps(RUN, List.of(new StepEvent((long) t + 1, 2.0, 0.02, null, 0.5, 0.24, 10, 96.0, null,
                        null, null, null, null, null, clock.seconds(), null)));
            }
            clock.advanceSeconds(1);
        }
        RunSeries s = series(null, SeriesRequest.DEFAULT_POINTS, false);
        assertThat(s.steps()).allSatisfy(p -> {
            assertThat(p.encodingRatio()).isEqualTo(0.37, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(p.dataWaitRatio()).isEqualTo(0.01, org.assertj.core.data.Offset.offset(1e-9));
        });
        assertThat(s.points().get(29).encodingRatio()).isEqualTo(0.37, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(s.points().get(0).encodingRatio()).as("before the first report").isNull();
    }

    @Test
    void aLogWithoutEncodingTimesHasNoEncodingShare() {
        for (int t = 0; t < 20; t++) {
            poll("node-a", RUN, new long[] {30 * GIB}, 0.9);
            if (t % 10 == 9) {
                step(t + 1, 2.5, 1.0, 0.5);
            }
            clock.advanceSeconds(1);
        }
        RunSeries s = series(null, SeriesRequest.DEFAULT_POINTS, false);
        assertThat(s.steps()).isNotEmpty().allSatisfy(p -> assertThat(p.encodingRatio()).isNull());
        assertThat(s.points()).allSatisfy(p -> assertThat(p.encodingRatio()).isNull());
    }

    @Test
    void historyIngestedEarlierIsServedWithThePredictionAlongside() {
        fleet.putSpec(RUN, new RunSpec(FakePredictor.FIXED_MODEL, FakePredictor.FIXED_GPU, 2, 8, 1024, null, null, null,
                "bf16", null, null, null, null, null, null, null, 1000L));
        double start = clock.seconds();
        for (int t = 0; t < 120; t++) {
            poll("node-a", RUN, new long[] {30 * GIB + t * (GIB / 10), 20 * GIB}, 0.9);
            if (t % 10 == 9) {
                step(t + 1, 2.5, 1.0, 0.5 - t / 1000.0);
            }
            clock.advanceSeconds(1);
        }

        RunSeries s = series(null, SeriesRequest.DEFAULT_POINTS, true);

        assertThat(s.runId()).isEqualTo(RUN);
        assertThat(s.windowSeconds()).isEqualTo(600);
        assertThat(s.downsampled()).isFalse();
        assertThat(s.predicted().stepSeconds()).isEqualTo(FakePredictor.FIXED_STEP_SECONDS);
        assertThat(s.predicted().peakMemoryBytes()).isEqualTo(FakePredictor.FIXED_PEAK_BYTES);
        assertThat(s.capacityBytes()).isEqualTo(FakePredictor.A100_80GB);

        assertThat(s.points()).hasSize(120);
        assertThat(s.points().get(0).ts()).isEqualTo(start);
        RunSeries.RunPoint last = s.points().get(119);
        assertThat(last.memoryUsedBytes()).as("the fuller GPU").isEqualTo(30 * GIB + 119 * (GIB / 10));
        assertThat(last.gpuUtilizationRatio()).isEqualTo(0.9, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(last.gpuCount()).isEqualTo(2);
        assertThat(last.powerWatts()).isEqualTo(600.0);
        // Step figures: absent before the first report, then held between reports.
        assertThat(s.points().get(0).stepSeconds()).isNull();
        assertThat(s.points().subList(9, 120)).allSatisfy(p -> {
            assertThat(p.stepSeconds()).isEqualTo(2.5);
            assertThat(p.dataWaitRatio()).isEqualTo(0.4);
            assertThat(p.samplesPerSecond()).isEqualTo(96 / 2.5);
        });
        assertThat(last.step()).isEqualTo(120);

        assertThat(s.steps()).hasSize(12);
        assertThat(s.steps().get(0).step()).isEqualTo(10);
        assertThat(s.steps().get(0).loss()).isEqualTo(0.5 - 9 / 1000.0);
        assertThat(s.steps()).allSatisfy(p -> assertThat(p.reports()).isEqualTo(1));

        assertThat(s.gpus()).extracting(RunSeries.GpuTrack::uuid).containsExactly(uuid("node-a", 0), uuid("node-a", 1));
        RunSeries.GpuTrack gpu0 = s.gpus().get(0);
        assertThat(gpu0.points()).hasSize(120);
        assertThat(gpu0.points().get(0).memoryUsedBytes()).isEqualTo(30 * GIB);
        assertThat(gpu0.points().get(0).smClockHz()).isEqualTo(1_410_000_000L);
        assertThat(gpu0.points().get(0).temperatureCelsius()).isEqualTo(60.0);
        assertThat(s.gpusOmitted()).isNull();
    }

    @Test
    void sinceKeepsOnlyWhatCameAtOrAfterIt() {
        double start = clock.seconds();
        for (int t = 0; t < 60; t++) {
            poll("node-a", RUN, new long[] {10 * GIB}, 0.8);
            step(t, 1.0, null, null);
            clock.advanceSeconds(1);
        }
        double since = start + 30;
        RunSeries s = series(since, 600, true);
        assertThat(s.sinceTs()).isEqualTo(since);
        assertThat(s.points()).hasSize(30).allSatisfy(p -> assertThat(p.ts()).isGreaterThanOrEqualTo(since));
        assertThat(s.steps()).hasSize(30).allSatisfy(p -> assertThat(p.ts()).isGreaterThanOrEqualTo(since));
        assertThat(s.gpus().get(0).points()).hasSize(30).allSatisfy(p -> assertThat(p.ts()).isGreaterThanOrEqualTo(since));
        assertThat(s.steps().get(0).step()).isEqualTo(30);

        RunSeries future = series(clock.seconds() + 3600, 600, true);
        assertThat(future.points()).isEmpty();
        assertThat(future.steps()).isEmpty();
        assertThat(future.gpus().get(0).points()).isEmpty();
    }

    @Test
    void aPointReadsTheSameWhereverTheRangeStarts() {
        // Two hosts polled half a second apart, a report every 10 s: a range starting between them must still
        // count both hosts' GPUs and the step time in force in its first points (a script polling with since).
        for (int t = 0; t < 60; t++) {
            poll("node-a", RUN, new long[] {10 * GIB}, 0.5);
            if (t % 10 == 0) {
                step(t, 2.0, 0.5, 0.3);
            }
            clock.advanceSeconds(0.5);
            poll("node-b", RUN, new long[] {30 * GIB}, 1.0);
            clock.advanceSeconds(0.5);
        }
        RunSeries all = series(null, 600, false);
        RunSeries.RunPoint reference = all.points().get(75); // node-b's poll at 37.5 s, 7.5 s after a report
        RunSeries later = series(reference.ts(), 600, false);
        assertThat(later.points().get(0)).isEqualTo(reference);
        assertThat(later.points()).isEqualTo(all.points().subList(75, all.points().size()));
        assertThat(later.points().get(0).gpuCount()).isEqualTo(2);
        assertThat(later.points().get(0).stepSeconds()).isEqualTo(2.0);
    }

    @Test
    void downsamplingIsBoundedKeepsFirstAndLastAndKeepsTheMemoryPeak() {
        double start = clock.seconds();
        for (int t = 0; t < 600; t++) {
            long used = t == 333 ? 79 * GIB : 40 * GIB; // one poll near OOM must not vanish when downsampled
            poll("node-a", RUN, new long[] {used}, 0.9);
            if (t % 2 == 0) { // 300 reports: the step window keeps 512
                step(t, t == 598 ? 3.0 : 1.0, null, 1.0);
            }
            clock.advanceSeconds(1);
        }
        double end = start + 599;

        RunSeries s = series(null, 50, true);

        assertThat(s.downsampled()).isTrue();
        assertThat(s.maxPoints()).isEqualTo(50);
        assertThat(s.points()).hasSizeLessThanOrEqualTo(50).hasSizeGreaterThan(40);
        assertThat(s.points().get(0).ts()).isEqualTo(start);
        assertThat(s.points().get(s.points().size() - 1).ts()).isEqualTo(end);
        assertThat(s.points()).extracting(RunSeries.RunPoint::memoryUsedBytes).contains(79 * GIB);
        for (int i = 1; i < s.points().size(); i++) {
            assertThat(s.points().get(i).ts()).isGreaterThan(s.points().get(i - 1).ts());
        }

        assertThat(s.steps()).hasSizeLessThanOrEqualTo(50);
        assertThat(s.steps().get(0).step()).isZero();
        assertThat(s.steps().get(0).reports()).isEqualTo(1);
        RunSeries.StepPoint lastStep = s.steps().get(s.steps().size() - 1);
        assertThat(lastStep.step()).isEqualTo(598);
        assertThat(lastStep.stepSeconds()).as("the last report as it was, not averaged away").isEqualTo(3.0);
        assertThat(s.steps().stream().mapToInt(RunSeries.StepPoint::reports).sum()).isEqualTo(300);

        RunSeries.GpuTrack track = s.gpus().get(0);
        assertThat(track.downsampled()).isTrue();
        assertThat(track.points()).hasSizeLessThanOrEqualTo(50);
        assertThat(track.points().get(0).ts()).isEqualTo(start);
        assertThat(track.points().get(track.points().size() - 1).ts()).isEqualTo(end);
        assertThat(track.points()).extracting(RunSeries.GpuPoint::memoryUsedBytes).contains(79 * GIB);

        assertThat(series(null, 600, true).downsampled()).isFalse();
    }

    @Test
    void gpusOfTwoHostsPolledAtDifferentTimesBothCountInEveryPoint() {
        for (int t = 0; t < 40; t++) {
            poll("node-a", RUN, new long[] {10 * GIB}, 0.5);
            clock.advanceSeconds(0.5);
            poll("node-b", RUN, new long[] {30 * GIB}, 1.0);
            clock.advanceSeconds(0.5);
        }
        RunSeries s = series(null, 600, false);
        assertThat(s.gpus()).isNull();
        assertThat(s.points()).hasSize(80);
        assertThat(s.points().get(0).gpuCount()).as("only node-a had polled").isEqualTo(1);
        assertThat(s.points().subList(1, 80)).allSatisfy(p -> {
            assertThat(p.gpuCount()).isEqualTo(2);
            assertThat(p.memoryUsedBytes()).isEqualTo(30 * GIB);
            assertThat(p.gpuUtilizationRatio()).isEqualTo(0.75);
            assertThat(p.gpuUtilizationMinRatio()).isEqualTo(0.5);
        });
    }

    @Test
    void aGpuSilentForLongerThanTheHoldDropsOutOfThePoints() {
        poll("node-a", RUN, new long[] {10 * GIB}, 0.5);
        poll("node-b", RUN, new long[] {30 * GIB}, 0.5);
        for (int t = 0; t < 60; t++) {
            clock.advanceSeconds(1);
            poll("node-a", RUN, new long[] {10 * GIB}, 0.5);
        }
        RunSeries s = series(null, 600, false);
        RunSeries.RunPoint last = s.points().get(s.points().size() - 1);
        assertThat(last.gpuCount()).isEqualTo(1);
        assertThat(last.memoryUsedBytes()).isEqualTo(10 * GIB);
    }

    @Test
    void readingsFromBeforeTheRunGotItsGpuAreLeftOut() {
        for (int t = 0; t < 30; t++) {
            poll("node-a", null, new long[] {70 * GIB}, 1.0); // another job, before this run existed
            clock.advanceSeconds(1);
        }
        double runStart = clock.seconds();
        for (int t = 0; t < 10; t++) {
            poll("node-a", RUN, new long[] {5 * GIB}, 0.3);
            clock.advanceSeconds(1);
        }
        RunSeries s = series(null, 600, true);
        assertThat(s.points()).hasSize(10).allSatisfy(p -> {
            assertThat(p.ts()).isGreaterThanOrEqualTo(runStart);
            assertThat(p.memoryUsedBytes()).isEqualTo(5 * GIB);
        });
        assertThat(s.gpus().get(0).points()).hasSize(10);
    }

    @Test
    void anEndedRunKeepsItsHistoryWithoutWhatItsGpusDidNext() {
        for (int t = 0; t < 20; t++) {
            poll("node-a", RUN, new long[] {5 * GIB}, 0.5);
            clock.advanceSeconds(1);
        }
        fleet.endRun(RUN);
        double ended = clock.seconds();
        clock.advanceSeconds(1);
        for (int t = 0; t < 20; t++) {
            poll("node-a", "next-run", new long[] {70 * GIB}, 1.0); // the next job on the same GPU
            clock.advanceSeconds(1);
        }
        RunSeries s = series(null, 600, true);
        assertThat(s.points()).hasSize(20).allSatisfy(p -> {
            assertThat(p.ts()).isLessThanOrEqualTo(ended);
            assertThat(p.memoryUsedBytes()).isEqualTo(5 * GIB);
        });
        assertThat(s.gpus().get(0).points()).hasSize(20);
        assertThat(SeriesBuilder.series(fleet, "next-run", SeriesRequest.defaults()).orElseThrow().points())
                .allSatisfy(p -> assertThat(p.memoryUsedBytes()).isEqualTo(70 * GIB));
    }

    @Test
    void stepFiguresAreHeldBetweenReportsButNotThroughAStall() {
        for (int t = 0; t < 200; t++) {
            poll("node-a", RUN, new long[] {5 * GIB}, 0.9);
            if (t < 60 && t % 10 == 0) {
                step(t, 2.0, null, null); // a report every 10 s, then the log falls silent
            }
            clock.advanceSeconds(1);
        }
        RunSeries s = series(null, 600, false);
        // Each report covers 10 steps of 2 s, so one is expected every 20 s: held for three such gaps (60 s) after
        // the last report at t = 50, then absent.
        assertThat(s.points().get(105).stepSeconds()).isEqualTo(2.0);
        assertThat(s.points().get(115).stepSeconds()).isNull();
        assertThat(s.points().get(199).stepSeconds()).isNull();
        assertThat(s.points().get(199).memoryUsedBytes()).isEqualTo(5 * GIB);
    }

    @Test
    void stepReportsArrivingOutOfOrderAreServedInTimeOrder() {
        double now = clock.seconds();
        clock.advanceSeconds(100);
        fleet.ingestSteps(RUN, List.of(StepEvent.of(30, 1.0, now + 30), StepEvent.of(10, 1.0, now + 10),
                StepEvent.of(20, 1.0, now + 20)));
        RunSeries s = series(null, 600, true);
        assertThat(s.steps()).extracting(RunSeries.StepPoint::step).containsExactly(10L, 20L, 30L);
        assertThat(s.points()).extracting(RunSeries.RunPoint::step).containsExactly(10L, 20L, 30L);
        assertThat(s.predicted()).as("no spec registered").isNull();
    }

    @Test
    void manyGpusAreCappedAndShareTheirPointBudget() {
        for (int t = 0; t < 200; t++) {
            long[] used = new long[40];
            java.util.Arrays.fill(used, 8 * GIB);
            poll("node-a", RUN, used, 0.9);
            poll("node-b", RUN, used, 0.9);
            clock.advanceSeconds(1);
        }
        RunSeries s = series(null, SeriesRequest.MAX_POINTS, true);
        assertThat(s.gpus()).hasSize(SeriesBuilder.MAX_GPU_TRACKS);
        assertThat(s.gpusOmitted()).isEqualTo(80 - SeriesBuilder.MAX_GPU_TRACKS);
        int perTrack = SeriesBuilder.MAX_GPU_POINTS / SeriesBuilder.MAX_GPU_TRACKS;
        assertThat(s.gpus()).allSatisfy(g -> assertThat(g.points()).hasSizeLessThanOrEqualTo(perTrack));
        assertThat(s.gpus().stream().mapToInt(g -> g.points().size()).sum())
                .isLessThanOrEqualTo(SeriesBuilder.MAX_GPU_POINTS);
        assertThat(s.points()).hasSize(200).allSatisfy(p -> assertThat(p.gpuCount()).isEqualTo(80));
    }

    @Test
    void theLargestAnswerStaysWithinItsBound() throws Exception {
        // 128 GPUs on 4 hosts polled at different moments for the whole window, a step report every second.
        long[] used = new long[32];
        java.util.Arrays.fill(used, 60 * GIB);
        for (int t = 0; t < 600; t++) {
            for (String host : List.of("node-a", "node-b", "node-c", "node-d")) {
                poll(host, RUN, used, 0.9);
                clock.advanceSeconds(0.25);
            }
            step(t, 1.0, 0.1, 0.3);
        }
        long t0 = System.nanoTime();
        RunSeries s = series(null, SeriesRequest.MAX_POINTS, true);
        long builtNanos = System.nanoTime() - t0;
        // Figures for docs/PERFORMANCE.md only (printed, never asserted): the best of a few warm builds.
        long warmFull = Long.MAX_VALUE;
        long warmPage = Long.MAX_VALUE;
        for (int r = 0; r < 10; r++) {
            long a = System.nanoTime();
            series(null, SeriesRequest.MAX_POINTS, true);
            long b = System.nanoTime();
            series(null, SeriesRequest.DEFAULT_POINTS, false);
            warmFull = Math.min(warmFull, b - a);
            warmPage = Math.min(warmPage, System.nanoTime() - b);
        }
        byte[] json = dev.trainwatch.protocol.Json.MAPPER.writeValueAsBytes(s);
        byte[] page = dev.trainwatch.protocol.Json.MAPPER.writeValueAsBytes(series(null, SeriesRequest.DEFAULT_POINTS,
                false));
        System.out.printf("largest series: %d run points, %d step points, %d GPU points, %d bytes; built in %.1f ms"
                        + " cold, %.1f ms warm; the page's query (gpus=false, 600 points): %d bytes, %.1f ms warm%n",
                s.points().size(), s.steps().size(), s.gpus().stream().mapToInt(g -> g.points().size()).sum(),
                json.length, builtNanos / 1e6, warmFull / 1e6, page.length, warmPage / 1e6);
        assertThat(s.downsampled()).isTrue();
        assertThat(s.points()).hasSizeLessThanOrEqualTo(SeriesRequest.MAX_POINTS);
        assertThat(s.gpus().stream().mapToInt(g -> g.points().size()).sum()).isLessThanOrEqualTo(SeriesBuilder.MAX_GPU_POINTS);
        assertThat(json.length).isLessThan(3 << 20);
    }

    @Test
    void anUnknownRunHasNoSeries() {
        assertThat(SeriesBuilder.series(fleet, "never-seen", SeriesRequest.defaults())).isEmpty();
    }
}
