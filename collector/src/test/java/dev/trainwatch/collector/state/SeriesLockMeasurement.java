package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.series.RunSeries;
import dev.trainwatch.collector.series.SeriesBuilder;
import dev.trainwatch.collector.series.SeriesRequest;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * For docs/PERFORMANCE.md (printed, never asserted): how long a series request holds the fleet's lock (the copy of
 * the windows it reads) against the build and the encoding that follow outside it, for a run of 128 GPUs (4 hosts
 * of 32 polled at different moments) and one of 1,024 (128 hosts of 8 polled at the same moments), each with full
 * 10-minute windows and a step report a second. Best of 10 warm runs of each phase.
 */
public final class SeriesLockMeasurement {

    private static final long GIB = 1L << 30;

    private SeriesLockMeasurement() {
    }

    public static void main(String[] args) throws Exception {
        measure(4, 32, 0.25);
        measure(128, 8, 0);
    }

    private static void measure(int hosts, int gpusPerHost, double hostStaggerSeconds) throws Exception {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        String run = "measured";
        Map<String, Long> seqs = new HashMap<>();
        long t0 = System.nanoTime();
        for (int t = 0; t < 600; t++) {
            for (int h = 0; h < hosts; h++) {
                String host = "node-" + h;
                double ts = clock.seconds();
                List<GpuSample> gpus = new ArrayList<>(gpusPerHost);
                List<String> uuids = new ArrayList<>(gpusPerHost);
                for (int i = 0; i < gpusPerHost; i++) {
                    String uuid = "GPU-" + host + "-" + i;
                    gpus.add(Samples.gpu(ts, i, uuid, 60 * GIB + (t % 7) * GIB, 0.9));
                    uuids.add(uuid);
                }
                fleet.ingestBatch(Samples.batch(host, host + "-agent", seqs.merge(host, 1L, Long::sum), gpus,
                        List.of(Samples.attribution(run, uuids)), List.of()));
                if (hostStaggerSeconds > 0) {
                    clock.advanceSeconds(hostStaggerSeconds);
                }
            }
            fleet.ingestSteps(run, List.of(new StepEvent((long) t, 1.0, 0.1, null, null, null, 10, 96.0, 0.3, null,
                    null, null, null, null, clock.seconds(), null)));
            clock.advanceSeconds(1 - hosts * hostStaggerSeconds);
        }
        System.out.printf("%d GPUs (%d hosts of %d), full windows, filled in %.1f s%n", hosts * gpusPerHost, hosts,
                gpusPerHost, (System.nanoTime() - t0) / 1e9);
        double now = clock.seconds();
        report(fleet, run, "largest answer (2000 points, gpus=true)",
                new SeriesRequest(null, SeriesRequest.MAX_POINTS, true));
        report(fleet, run, "page's full fetch (600 points, gpus=false)",
                new SeriesRequest(null, SeriesRequest.DEFAULT_POINTS, false));
        report(fleet, run, "page's each-second fetch (last 5 s, gpus=false)",
                new SeriesRequest(now - 5, SeriesRequest.DEFAULT_POINTS, false));
    }

    private static void report(Fleet fleet, String run, String what, SeriesRequest request) throws Exception {
        long copy = Long.MAX_VALUE;
        long build = Long.MAX_VALUE;
        long encode = Long.MAX_VALUE;
        int bytes = 0;
        long entries = 0;
        for (int r = 0; r < 10; r++) {
            long a = System.nanoTime();
            SeriesSource source = SeriesBuilder.copy(fleet, run, request).orElseThrow();
            long b = System.nanoTime();
            RunSeries series = SeriesBuilder.build(source, request);
            long c = System.nanoTime();
            byte[] json = Json.MAPPER.writeValueAsBytes(series);
            long d = System.nanoTime();
            copy = Math.min(copy, b - a);
            build = Math.min(build, c - b);
            encode = Math.min(encode, d - c);
            bytes = json.length;
            entries = source.gpus().stream().mapToLong(g -> g.size()).sum();
        }
        System.out.printf("  %-50s lock held (copy of %,d GPU entries) %6.1f ms; outside the lock: build %6.1f ms,"
                + " encode %5.1f ms; %,d bytes%n", what, entries, copy / 1e6, build / 1e6, encode / 1e6, bytes);
    }
}
