package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.series.RunSeries;
import dev.trainwatch.collector.series.SeriesBuilder;
import dev.trainwatch.collector.series.SeriesRequest;
import dev.trainwatch.collector.state.window.GpuWindow;
import dev.trainwatch.collector.state.window.StepWindow;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.Samples;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A series request holds the fleet's lock only to copy the windows: the copy yields the same answer as the live
 * windows, holds only the entries the build reads, and ingest goes on while a build is in progress.
 */
class SeriesCopyTest {

    private static final String RUN = "copy-run";
    private static final long GIB = 1L << 30;

    // ---- the copy gives the same answer --------------------------------------------------------------------

    /** GPUs on hosts polled at different moments, rings that wrapped, one GPU silent, steps out of order. */
    private static List<GpuWindow> windows() {
        List<GpuWindow> out = new ArrayList<>();
        for (int g = 0; g < 5; g++) {
            GpuWindow w = new GpuWindow("GPU-" + g, 120, 60); // 2-s resolution, 60 entries: wraps below
            w.host(g < 3 ? "node-b" : "node-a");
            for (int t = 0; t < 150; t++) {
                double ts = 1000 + t * 2 + g * 0.37;
                if (g == 4 && t > 100) {
                    break; // falls silent: only carried readings count after that
                }
                w.add(Samples.gpu(ts, g, "GPU-" + g, (20L + (t * 7 + g) % 50) * GIB, ((t + g) % 10) / 10.0), ts);
            }
            out.add(w);
        }
        out.add(new GpuWindow("GPU-empty", 120, 60)); // attributed, never polled
        return out;
    }

    private static StepWindow steps() {
        StepWindow s = new StepWindow(600, 40); // wraps below
        for (int t = 0; t < 70; t++) {
            double ts = 1000 + t * 4.1 + (t % 3 == 1 ? -5 : 0); // some arrive out of order
            s.add(new StepEvent(t * 10L, 1.0 + (t % 4) * 0.1, t % 2 == 0 ? 0.2 : null, null, null, null, 10,
                    t % 5 == 0 ? null : 64.0, t % 6 == 0 ? null : 1.0 / (t + 1), null, null, null, null, null, ts, null),
                    ts);
        }
        return s;
    }

    private static byte[] build(List<? extends GpuSeries> gpus, StepWindow steps, double fromTs, double toTs,
                                SeriesRequest request) throws Exception {
        return Json.MAPPER.writeValueAsBytes(SeriesBuilder.build(new SeriesSource(RUN, 1300, 600, fromTs, toTs,
                steps, gpus, new SeriesSource.Predicted(1.1, 40 * GIB, 50.0), 80 * GIB, 64), request));
    }

    @Test
    void theCopiedWindowsGiveByteForByteTheAnswerOfTheLiveOnes() throws Exception {
        List<GpuWindow> live = windows();
        StepWindow liveSteps = steps();
        List<Double> sinces = Arrays.asList(null, 500.0, 1150.0, 1201.11, 1240.0, 1298.74, 1400.0);
        double[] froms = {Double.NEGATIVE_INFINITY, 1100, 1222.37, 1500};
        double[] tos = {Double.POSITIVE_INFINITY, 1260.0, 1250.74, 1100};
        int compared = 0;
        for (Double since : sinces) {
            for (double from : froms) {
                for (double to : tos) {
                    for (int maxPoints : new int[] {10, 37, SeriesRequest.MAX_POINTS}) {
                        for (boolean gpus : new boolean[] {true, false}) {
                            SeriesRequest request = new SeriesRequest(since, maxPoints, gpus);
                            double readFrom = SeriesBuilder.gpuReadFromTs(request, from);
                            List<GpuWindow> copies = live.stream()
                                    .map(w -> Fleet.copyForSeries(w, readFrom, to)).toList();
                            byte[] expected = build(live, liveSteps, from, to, request);
                            byte[] actual = build(copies, liveSteps.copy(), from, to, request);
                            assertThat(new String(actual, java.nio.charset.StandardCharsets.UTF_8))
                                    .as("since=%s from=%s to=%s max_points=%d gpus=%s", since, from, to,
                                            maxPoints, gpus)
                                    .isEqualTo(new String(expected, java.nio.charset.StandardCharsets.UTF_8));
                            compared++;
                        }
                    }
                }
            }
        }
        assertThat(compared).isEqualTo(7 * 4 * 4 * 3 * 2);
    }

    @Test
    void aCopyHoldsOnlyTheEntriesFromShortlyBeforeSinceToTheRunsEnd() {
        GpuWindow live = windows().get(0); // entries at 1180, 1182, ..., 1298 after the wrap
        assertThat(live.size()).isEqualTo(60);

        GpuWindow all = Fleet.copyForSeries(live, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
        assertThat(all.size()).isEqualTo(60);
        assertThat(all.ts(0)).isEqualTo(live.ts(0));
        assertThat(all.ts(59)).isEqualTo(live.ts(59));
        assertThat(all.memoryUsedBytes(17)).isEqualTo(live.memoryUsedBytes(17));
        assertThat(all.utilizationRatio(42)).isEqualTo(live.utilizationRatio(42));
        assertThat(all.host()).isEqualTo("node-b");

        SeriesRequest lastMinute = new SeriesRequest(1290.0, SeriesRequest.MAX_POINTS, true);
        GpuWindow recent = Fleet.copyForSeries(live, SeriesBuilder.gpuReadFromTs(lastMinute, 0), Double.POSITIVE_INFINITY);
        assertThat(recent.ts(0)).isEqualTo(1260.0); // since less the 30-s hold
        assertThat(recent.size()).isEqualTo(20);

        GpuWindow ended = Fleet.copyForSeries(live, Double.NEGATIVE_INFINITY, 1200.0);
        assertThat(ended.size()).isEqualTo(11); // 1180 .. 1200
        assertThat(Fleet.copyForSeries(live, 1250, 1200).size()).isZero();

        // The copy is not a view: the live window moving on leaves it as it was.
        double first = all.ts(0);
        for (int t = 0; t < 30; t++) {
            live.add(Samples.gpu(1400 + t * 2, 0, "GPU-0", GIB, 0.5), 1400 + t * 2);
        }
        assertThat(all.ts(0)).isEqualTo(first);
        assertThat(all.size()).isEqualTo(60);
    }

    // ---- the lock is held for the copy only -----------------------------------------------------------------

    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    private long seq;

    private void poll(int gpus, long usedBytes) {
        double ts = clock.seconds();
        List<GpuSample> samples = new ArrayList<>();
        List<String> uuids = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            samples.add(Samples.gpu(ts, i, "GPU-" + i, usedBytes, 0.9));
            uuids.add("GPU-" + i);
        }
        fleet.ingestBatch(Samples.batch("node-a", "agent-a", ++seq, samples,
                List.of(Samples.attribution(RUN, uuids)), List.of()));
    }

    @Test
    void ingestCompletesWhileASeriesBuildIsInProgress() throws Exception {
        for (int t = 0; t < 300; t++) {
            poll(8, 30 * GIB);
            clock.advanceSeconds(1);
        }
        SeriesRequest request = new SeriesRequest(null, SeriesRequest.MAX_POINTS, true);
        // The copy is all a build takes under the lock; the build runs on the copy after the lock is released.
        SeriesSource copy = SeriesBuilder.copy(fleet, RUN, request).orElseThrow();

        double newest = clock.seconds();
        // Another thread's ingest completes: the copy returned with the fleet's lock released.
        CompletableFuture.runAsync(() -> poll(8, 70 * GIB)).get(30, TimeUnit.SECONDS);

        RunSeries built = SeriesBuilder.build(copy, request);
        // The build read the copy taken before that ingest; a new request sees it.
        assertThat(built.points().get(built.points().size() - 1).ts()).isLessThan(newest);
        RunSeries after = SeriesBuilder.series(fleet, RUN, request).orElseThrow();
        RunSeries.RunPoint last = after.points().get(after.points().size() - 1);
        assertThat(last.ts()).isEqualTo(newest);
        assertThat(last.memoryUsedBytes()).isEqualTo(70 * GIB);
    }

    @Test
    void whatIsCopiedUnderTheLockDoesNotDependOnMaxPointsOrTheGpuListing() {
        for (int t = 0; t < 200; t++) {
            poll(4, 30 * GIB);
            clock.advanceSeconds(1);
        }
        double now = clock.seconds();
        for (SeriesRequest request : List.of(new SeriesRequest(null, SeriesRequest.MIN_POINTS, false),
                new SeriesRequest(null, SeriesRequest.MAX_POINTS, true))) {
            SeriesSource copy = SeriesBuilder.copy(fleet, RUN, request).orElseThrow();
            assertThat(copy.gpus()).hasSize(4).allSatisfy(g -> assertThat(g.size()).isEqualTo(200));
        }
        // The page's follow-up query (the last few seconds) copies the last few seconds and the 30-s carry-in.
        SeriesSource recent = SeriesBuilder.copy(fleet, RUN, new SeriesRequest(now - 5, 600, false)).orElseThrow();
        assertThat(recent.gpus()).allSatisfy(g -> assertThat(g.size()).isEqualTo(35));
        assertThat(SeriesBuilder.copy(fleet, "unknown", SeriesRequest.defaults())).isEmpty();
    }
}
