package dev.trainwatch.collector;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.ingest.BodyDecoder;
import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.MonotonicClock;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import dev.trainwatch.protocol.wire.Gzip;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Warms the scrape and ingest code at start, so the first scrapes of a large fleet are not run by the interpreter: a
 * throwaway fleet of {@value #HOSTS} nodes × 8 GPUs, fed {@value #ROUNDS} seconds of made-up gzip batches and step
 * reports, scraped in both formats after each (docs/PERFORMANCE.md). Runs once on a minimum-priority daemon thread,
 * touching nothing of the real collector; a failure is logged and ignored.
 */
public final class ScrapeWarmUp {

    private static final System.Logger LOG = System.getLogger(ScrapeWarmUp.class.getName());
    static final int HOSTS = 8;
    static final int ROUNDS = 120;
    private static final int GPUS = 8;

    private ScrapeWarmUp() {
    }

    public static Thread startInBackground() {
        return startInBackground(ROUNDS);
    }

    static Thread startInBackground(int rounds) {
        Thread thread = new Thread(() -> {
            try {
                run(rounds);
            } catch (RuntimeException | IOException | Error e) {
                LOG.log(System.Logger.Level.DEBUG, "scrape warm-up stopped: " + e);
            }
        }, "trainwatch-warm-up");
        thread.setDaemon(true);
        thread.setPriority(Thread.MIN_PRIORITY);
        thread.start();
        return thread;
    }

    /** Returns the size of the last scrape (for tests). */
    static int run(int rounds) throws IOException {
        AtomicLong nanos = new AtomicLong(Instant.parse("2026-01-01T00:00:00Z").getEpochSecond() * 1_000_000_000L);
        MonotonicClock clock = MonotonicClock.of(nanos::get, nanos::get);
        // No specs: the predictor is never asked.
        Fleet fleet = new Fleet(spec -> null, clock, FleetSettings.defaults(), DetectorSettings.defaults());
        MetricsExporter metrics = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, false);
        BodyDecoder decoder = new BodyDecoder(4L << 20);
        int size = 0;
        for (int second = 1; second <= rounds; second++) {
            double now = nanos.addAndGet(1_000_000_000L) / 1e9;
            for (int h = 0; h < HOSTS; h++) {
                byte[] body = Gzip.fastest(Json.MAPPER.writeValueAsBytes(batch(h, second, now)));
                fleet.ingestBatch(decoder.batch(body, "gzip"));
                fleet.ingestSteps("warm-up-" + h, List.of(new StepEvent((long) second, 0.9, 0.05, null, null, null,
                        GPUS, 256.0, 0.12, 1e-4, 1.1, null, null, null, now, null)));
            }
            fleet.tick();
            size = metrics.scrape("text/plain").length() + metrics.scrape("application/openmetrics-text").length();
        }
        return size;
    }

    private static AgentBatch batch(int host, long second, double now) {
        List<GpuSample> gpus = new ArrayList<>(GPUS);
        List<RankInfo> ranks = new ArrayList<>(GPUS);
        List<String> uuids = new ArrayList<>(GPUS);
        for (int g = 0; g < GPUS; g++) {
            String uuid = String.format("GPU-%08x-0000-4000-8000-%012x", host, g);
            uuids.add(uuid);
            long capacity = 85_899_345_920L;
            long used = capacity / 2 + (second % 13) * (1L << 20);
            double util = 0.9 + 0.01 * ((second + g) % 7);
            gpus.add(new GpuSample(now, g, uuid, "NVIDIA H100 80GB HBM3", null, capacity, used, null, capacity - used,
                    util, 0.45, new UtilizationWindow(6, util - 0.05, util, Math.min(1.0, util + 0.02), 0.0, now - 1,
                    now), 1_980_000_000L, 1_980_000_000L, 2_619_000_000L, 2_619_000_000L, List.of(), 650.0, 700.0,
                    1.0e6 + second * 650.0, 64.0, 0, List.of(new GpuProcess(1000 + g, used, 0.9, 0.4)), false, null));
            ranks.add(new RankInfo(1000 + g, g, g, GPUS, List.of(uuid)));
        }
        RunAttribution run = new RunAttribution("warm-up-" + host, ranks.stream().map(RankInfo::pid).toList(),
                uuids, ranks, null, null, null, null, null, null, null);
        return new AgentBatch("warm-up-" + host, "warm-up-agent-" + host, second, gpus, List.of(run), List.of(),
                new AgentHealth(0.004, 0L, 0L, 0L, 0L, 1.0), null, now, null);
    }
}
