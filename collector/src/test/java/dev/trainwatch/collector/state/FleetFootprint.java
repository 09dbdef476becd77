package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Measures the fleet's heap footprint and ingest cost for the sizing target: 1,024 GPUs (128 nodes × 8) and 128
 * runs with full 10-minute windows (1-s polls), detectors running. Not a unit test (no timing assertions in
 * tests); after {@code ./mvnw -B -o -q install -DskipTests}, run {@code java -Xmx256m -cp
 * collector/target/classes:collector/target/test-classes:protocol/target/classes:estimator/target/classes:JACKSON
 * dev.trainwatch.collector.state.FleetFootprint 660} (JACKSON: the jackson-core, -databind and -annotations jars) to
 * show the fleet fits. docs/PERFORMANCE.md has the newer per-GPU and per-run figures.
 */
public final class FleetFootprint {

    private FleetFootprint() {
    }

    public static void main(String[] args) {
        int nodes = 128;
        int gpusPerNode = 8;
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 660;
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        for (int r = 0; r < nodes; r++) {
            fleet.putSpec("run-" + r, new RunSpec("pixart-sigma-xl-2", "a100-80gb", 8, 32, 1024, null, null, null,
                    "bf16", "came", true, false, "precomputed", 0, null, null, 100_000L));
        }
        long heapBefore = usedHeapAfterGc();
        long samples = 0;
        long start = System.nanoTime();
        long seq = 0;
        for (int s = 0; s < seconds; s++) {
            clock.advanceSeconds(1);
            double now = clock.seconds();
            seq++;
            for (int n = 0; n < nodes; n++) {
                List<GpuSample> gpus = new ArrayList<>(gpusPerNode);
                List<String> uuids = new ArrayList<>(gpusPerNode);
                for (int g = 0; g < gpusPerNode; g++) {
                    String uuid = "GPU-" + n + "-" + g;
                    uuids.add(uuid);
                    double util = 0.9 + 0.05 * Math.sin(s / 7.0 + g);
                    long used = (60L << 30) + ((long) (s % 60) << 20);
                    gpus.add(new GpuSample(now, g, uuid, "NVIDIA A100-SXM4-80GB", "00000000:07:00.0",
                            FakePredictor.A100_80GB, used, 1L << 29, FakePredictor.A100_80GB - used, util, 0.4,
                            new UtilizationWindow(6, util - 0.1, util, Math.min(1, util + 0.05), 0.0, now - 1, now),
                            1_380_000_000L, 1_410_000_000L, 1_593_000_000L, 1_593_000_000L, List.of(), 350.0, 400.0,
                            1e9 + s * 350.0, 66.0, 0, List.of(new GpuProcess(1000 + g, used - (1L << 29), null, null)),
                            false, null));
                }
                AgentBatch batch = new AgentBatch("node-" + n, "agent-" + n, seq, gpus,
                        List.of(new RunAttribution("run-" + n, List.of(1000L), uuids, List.of(), null, false, null, null, null, null, null)),
                        List.of(), new AgentHealth(0.004, 0L, 0L, 0L, 0L, 1.0), null, null, null);
                fleet.ingestBatch(batch);
                samples += gpusPerNode;
                if (s % 20 == 0) {
                    fleet.ingestSteps("run-" + n, List.of(new StepEvent((long) s, 4.0, 0.1, null, null, null, 5,
                            256.0, 0.1, 1e-4, 1.0, 128, 128, null, now, null)));
                }
            }
            fleet.tick();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        long heapAfter = usedHeapAfterGc();
        double viewMs = Double.POSITIVE_INFINITY;
        int views = 0;
        for (int i = 0; i < 20; i++) { // best of 20: the first calls run interpreted
            long viewStart = System.nanoTime();
            views = fleet.runs().size() + fleet.gpus().size();
            viewMs = Math.min(viewMs, (System.nanoTime() - viewStart) / 1e6);
        }
        long cpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        System.out.printf(Locale.ROOT, "runs=%d gpus=%d agents=%d simulated=%ds samples=%d%n", fleet.runs().size(),
                fleet.gpus().size(), fleet.agents().size(), seconds, samples);
        System.out.printf(Locale.ROOT, "ingest incl. detectors and tick: %.0f GPU-samples/s (%.1f s wall, "
                + "%.1f s CPU of this thread in all)%n", samples / elapsed, elapsed, cpu / 1e9);
        System.out.printf(Locale.ROOT, "heap used after GC: %.1f MB before samples, %.1f MB with full windows "
                + "(fleet state %.1f MB); max heap %.0f MB%n", heapBefore / 1e6, heapAfter / 1e6,
                (heapAfter - heapBefore) / 1e6, Runtime.getRuntime().maxMemory() / 1e6);
        System.out.printf(Locale.ROOT, "snapshot of all run and GPU views (%d): %.1f ms (best of 20)%n", views,
                viewMs);
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
