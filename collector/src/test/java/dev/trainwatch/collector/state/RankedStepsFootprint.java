package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Measures what keeping step reports per rank costs: heap of the rank windows and CPU per report, for 128 runs
 * whose 8 ranks each report every step (Open-Sora's timer lines), and for runs at the per-run rank limit. Not a
 * unit test (no timing assertions in tests); run it as docs/PERFORMANCE.md says.
 *
 * <p>Arguments: runs, ranks per run, simulated seconds (defaults 128, 8, 660); one step every 4 s.
 */
public final class RankedStepsFootprint {

    private RankedStepsFootprint() {
    }

    public static void main(String[] args) {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 128;
        int ranks = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 660;
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        for (int r = 0; r < runs; r++) {
            fleet.putSpec("run-" + r, new RunSpec("opensora-2.0", "a100-80gb", ranks, 1, 256, null, null, 33,
                    "bf16", "adamw", true, true, "online", 2, null, null, 100_000L));
        }
        long reports = 0;
        long counted = 0;
        long cpuStart = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        for (int s = 1; s <= seconds; s++) {
            clock.advanceSeconds(1);
            if (s % 4 == 0) {
                for (int r = 0; r < runs; r++) {
                    List<StepEvent> batch = new ArrayList<>(ranks);
                    for (int k = ranks - 1; k >= 0; k--) {
                        batch.add(new StepEvent((long) s / 4, 4.0, 0.01 + 0.001 * k, 3.0, 0.2, 0.6, 1, null, 0.1,
                                1e-5, 1.0, null, null, k, clock.seconds(), null));
                    }
                    counted += fleet.ingestSteps("run-" + r, batch).size();
                    reports += ranks;
                }
            }
            fleet.tick();
        }
        double cpu = (ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpuStart) / 1e9;
        long heapWith = usedHeapAfterGc();
        fleet = null; // the fleet's state is what the heap loses when the fleet goes
        long heapWithout = usedHeapAfterGc();
        System.out.printf(Locale.ROOT, "runs=%d ranks=%d simulated=%ds reports=%d counted as steps=%d%n", runs,
                ranks, seconds, reports, counted);
        System.out.printf(Locale.ROOT, "CPU incl. detectors and ticks: %.2f s, %.1f µs per report%n", cpu,
                cpu * 1e6 / reports);
        System.out.printf(Locale.ROOT, "fleet state with full windows: %.1f MB (%.1f KB per run)%n",
                (heapWith - heapWithout) / 1e6, (heapWith - heapWithout) / 1e3 / runs);
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
