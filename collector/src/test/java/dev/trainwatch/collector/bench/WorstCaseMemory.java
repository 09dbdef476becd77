package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.history.HistoryRecorder;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.collector.metrics.LimitMetrics;
import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.series.SeriesBuilder;
import dev.trainwatch.collector.series.SeriesRequest;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.state.Slots;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The collector's memory with every documented limit full at once: 1,024 runs (the command's default), 4,096 GPUs
 * with full 10-minute windows at 1 s, 1,024 agents, 256 ranks in every run with their 16 reports each, every run's
 * 512 step reports, the run history writing every run's summaries (as with --data-dir), two series requests
 * building at once (the endpoint's cap), and a scrape. Prints the heap
 * retained after full GCs and the process's resident memory (VmRSS, VmHWM); docs/PERFORMANCE.md keeps the
 * figures and the JVM settings that hold them. Not a test: run it by hand (command in docs/PERFORMANCE.md).
 */
public final class WorstCaseMemory {
    static final int AGENTS = 1_024;
    static final int GPUS_PER_AGENT = 4;
    static final int RANKS = Integer.getInteger("ranks", 256);
    static final int WINDOW_SECONDS = 600;

    private WorstCaseMemory() {
    }

    public static void main(String[] args) throws Exception {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long before = usedAfterGc(memory);
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        FleetSettings settings = CollectorServer.fleetSettings(CollectorConfig.defaults());
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, settings, DetectorSettings.defaults());
        // The run history as --data-dir keeps it: every run's changed summary is sent to the writer and written.
        Path dataDir = Files.createTempDirectory("trainwatch-worst-case");
        HistoryStore store = HistoryStore.open(dataDir);
        HistoryRecorder recorder = new HistoryRecorder(store, spec -> java.util.Optional.empty(), outcome -> { },
                line -> { }, Duration.ofSeconds(2), Clock.systemUTC());
        fleet.addListener(recorder);
        recorder.start();
        long t0 = System.nanoTime();
        for (int h = 0; h < AGENTS; h++) {
            fleet.putSpec(runId(h), new RunSpec(FakePredictor.FIXED_MODEL, FakePredictor.FIXED_GPU, GPUS_PER_AGENT * 64, 8,
                    1024, null, null, null, "bf16", "came", false, false, "precomputed", 0, null, null, 100_000L));
        }
        long seq = 0;
        for (int t = 0; t < WINDOW_SECONDS; t++) {
            clock.advance(Duration.ofSeconds(1));
            double now = clock.seconds();
            seq++;
            for (int h = 0; h < AGENTS; h++) {
                fleet.ingestBatch(batch(h, seq, now));
            }
            // 512 reports per run over the window: every run's step window is full.
            if (t % 10 < 9 || t >= WINDOW_SECONDS - 60) {
                for (int h = 0; h < AGENTS; h++) {
                    fleet.ingestSteps(runId(h), List.of(new StepEvent((long) t, 1.3, 0.1, null, null, null, 10,
                            64.0, 0.1, 1e-4, 1.0, 128, 128, null, now, null)));
                }
            }
            // In the last 16 s every rank of every run reports once a second: 256 ranks x 16 reports per run.
            if (t >= WINDOW_SECONDS - 16) {
                for (int h = 0; h < AGENTS; h++) {
                    List<StepEvent> ranks = new ArrayList<>(RANKS);
                    for (int r = 0; r < RANKS; r++) {
                        ranks.add(new StepEvent((long) t, 1.3, 0.1, null, null, null, 10, 64.0, 0.1, 1e-4, 1.0,
                                128, 128, r, now, null));
                    }
                    fleet.ingestSteps(runId(h), ranks);
                }
            }
            if (t % 60 == 0) {
                System.out.printf("  filled %d of %d s%n", t, WINDOW_SECONDS);
            }
        }
        fleet.tick();
        long built = System.nanoTime();
        MetricsExporter exporter = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, true);
        exporter.bind(new LimitMetrics(fleet::limits));
        String scrape = exporter.scrape();
        // Two series builds at once (the endpoint's cap), each of a whole run with its GPUs.
        List<CompletableFuture<Integer>> series = List.of(
                CompletableFuture.supplyAsync(() -> SeriesBuilder.series(fleet, runId(0), SeriesRequest.defaults()).map(WorstCaseMemory::encodedLength)
                        .orElseThrow()),
                CompletableFuture.supplyAsync(() -> SeriesBuilder.series(fleet, runId(1), SeriesRequest.defaults()).map(WorstCaseMemory::encodedLength)
                        .orElseThrow()));
        int seriesChars = series.stream().mapToInt(CompletableFuture::join).sum();
        fleet.publishChangedSummaries();
        long after = usedAfterGc(memory);
        for (Slots.Usage usage : fleet.limits()) {
            System.out.printf("%-7s %,6d of %,6d%n", usage.kind().label(), usage.used(), usage.limit());
        }
        System.out.printf("filled in %.0f s; scrape %,d bytes; two series %,d bytes of JSON%n", (built - t0) / 1e9,
                scrape.length(), seriesChars);
        System.out.printf("retained heap: %.1f MB (after GC: %.1f MB before, %.1f MB after; max heap %.0f MB)%n",
                (after - before) / 1048576.0, before / 1048576.0, after / 1048576.0,
                memory.getHeapMemoryUsage().getMax() / 1048576.0);
        System.out.println("resident: " + proc("VmRSS") + "; peak resident: " + proc("VmHWM"));
        System.out.printf("history: %s in %s%n", Files.size(dataDir.resolve("trainwatch.db")) / 1024 + " KiB",
                dataDir);
        recorder.close();
        store.close();
        if (fleet.runs().isEmpty() || exporter.registry() == null) {
            throw new IllegalStateException("empty fleet");
        }
    }

    private static int encodedLength(Object value) {
        try {
            return dev.trainwatch.protocol.Json.MAPPER.writeValueAsBytes(value).length;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String runId(int host) {
        return "worst-run-" + host;
    }

    static AgentBatch batch(int h, long seq, double ts) {
        String host = "node-" + h;
        List<GpuSample> samples = new ArrayList<>(GPUS_PER_AGENT);
        List<String> uuids = new ArrayList<>(GPUS_PER_AGENT);
        List<Long> pids = new ArrayList<>(GPUS_PER_AGENT);
        for (int g = 0; g < GPUS_PER_AGENT; g++) {
            String uuid = Payloads.uuid(host, g);
            uuids.add(uuid);
            pids.add(10_000L + g);
            long used = 40_000_000_000L + (seq % 60) * 10_000_000L + g;
            samples.add(Payloads.sample(ts, g, uuid, used, 0.85 + (seq + g) % 15 / 100.0,
                    (seq + g) % 7 == 0 ? List.of("sw_power_cap") : List.of()));
        }
        List<RunAttribution> runs = List.of(new RunAttribution(runId(h), pids, uuids, null, null, null, null, null, null, null, null));
        return new AgentBatch(host, host + "-agent", seq, samples, runs, List.of(),
                new AgentHealth(0.02, 0L, 0L, 0L, 0L, 1.0), null, null, null);
    }

    private static long usedAfterGc(MemoryMXBean memory) {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static String proc(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).strip();
            }
        }
        return "unknown";
    }
}
