package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;

/**
 * Where a scrape's time goes: the fleet's views, the series refresh, the snapshots, the rendering; and the rendering
 * as served ({@link MetricsExporter#scrapeBytes}) against client_java's own writer on the same series.
 */
public final class ScrapeBreakdown {
    private ScrapeBreakdown() {
    }

    public static void main(String[] args) {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = BenchFleet.build(clock);
        MetricsExporter exporter = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, true);
        exporter.scrape();
        java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int round = 0; round < 10; round++) {
            long c0 = cpu.getCurrentThreadCpuTime();
            exporter.scrape();
            long c1 = cpu.getCurrentThreadCpuTime();
            System.out.printf("full scrape: %.1f ms of CPU%n", (c1 - c0) / 1e6);
            long t0 = System.nanoTime();
            fleet.gpus();
            long t1 = System.nanoTime();
            fleet.runs();
            long t2 = System.nanoTime();
            exporter.refresh();
            long t3 = System.nanoTime();
            io.prometheus.metrics.model.snapshots.MetricSnapshots snapshots =
                    exporter.registry().getPrometheusRegistry().scrape();
            long t4 = System.nanoTime();
            exporter.refresh();
            long t5 = System.nanoTime();
            exporter.registry().scrape();
            long t6 = System.nanoTime();
            long c2 = cpu.getCurrentThreadCpuTime();
            exporter.scrapeBytes(MetricsExporter.OPENMETRICS);
            long c3 = cpu.getCurrentThreadCpuTime();
            exporter.refresh();
            exporter.registry().scrape(MetricsExporter.OPENMETRICS);
            long c4 = cpu.getCurrentThreadCpuTime();
            System.out.printf("gpus() %.1f ms, runs() %.1f ms, refresh %.1f ms (incl. views), snapshots %.1f ms;"
                    + " client_java's own writer (snapshots, text, String) %.1f ms%n", (t1 - t0) / 1e6,
                    (t2 - t1) / 1e6, (t3 - t2) / 1e6, (t4 - t3) / 1e6, (t6 - t5) / 1e6);
            System.out.printf("OpenMetrics as served (bytes) %.1f ms of CPU; the same through client_java's writer"
                    + " (a String, as Micrometer's scrape returns it) %.1f ms%n", (c3 - c2) / 1e6, (c4 - c3) / 1e6);
            if (snapshots.size() == 0) {
                throw new IllegalStateException("no series");
            }
        }
    }
}
