package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.protocol.testing.SettableClock;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Instant;

/**
 * Retained heap of a full fleet (1,024 GPUs, 128 runs, 10-minute windows at 1 s) plus its exporter after one scrape:
 * heap used after full GCs, minus the same before building. Run it with {@code -Xmx256m} to show it fits.
 */
public final class FleetHeapMeasurement {

    private FleetHeapMeasurement() {
    }

    public static void main(String[] args) {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long before = usedAfterGc(memory);
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        long t0 = System.nanoTime();
        Fleet fleet = BenchFleet.build(clock);
        long built = System.nanoTime();
        MetricsExporter exporter = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, true);
        String scrape = exporter.scrape();
        long after = usedAfterGc(memory);
        System.out.printf("fleet: %d GPUs, %d runs, %d agents; built in %.1f s; scrape %d bytes%n",
                fleet.gpus().size(), fleet.runs().size(), fleet.agents().size(), (built - t0) / 1e9,
                scrape.length());
        System.out.printf("retained heap: %.1f MB (after GC: %.1f MB before, %.1f MB after; max heap %.0f MB)%n",
                (after - before) / 1048576.0, before / 1048576.0, after / 1048576.0,
                memory.getHeapMemoryUsage().getMax() / 1048576.0);
        // Keep both reachable until measured.
        if (fleet.runs().isEmpty() || exporter.registry() == null) {
            throw new IllegalStateException("empty fleet");
        }
    }

    private static long usedAfterGc(MemoryMXBean memory) {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
