package dev.trainwatch.collector.bench;

import com.sun.management.OperatingSystemMXBean;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.history.HistoryRecorder;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.collector.ingest.BodyDecoder;
import dev.trainwatch.collector.ingest.InputValidator;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.StepEvent;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The operations of {@link IngestBenchmark} ({@code ingestWithSteps}: one 64-GPU batch and one step report of its
 * run) measured in CPU time rather than wall time, with and without the SQLite history listening: the ingesting
 * thread's CPU (what ingest itself costs) and the whole process's CPU (including the history writer's thread, JIT
 * and GC). On a shared machine the other builds' load distorts wall-clock throughput far more than CPU time.
 *
 * <p>Usage: {@code IngestCpuMeasurement [operations] [rounds]}; prints one line per round and mode. Run: see
 * docs/PERFORMANCE.md ("Collector: in-process costs").
 */
public final class IngestCpuMeasurement {
    private IngestCpuMeasurement() {
    }

    public static void main(String[] args) throws Exception {
        int operations = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        for (int round = 1; round <= rounds; round++) {
            for (String history : List.of("none", "sqlite")) {
                measure(history, operations, round);
            }
        }
    }

    private static void measure(String history, int operations, int round) throws Exception {
        Clock clock = Clock.systemUTC();
        BenchPayloads payloads = new BenchPayloads(16, clock.millis() / 1000.0);
        CollectorConfig.Limits limits = CollectorConfig.Limits.defaults();
        BodyDecoder decoder = new BodyDecoder(limits.maxInflatedBytes());
        InputValidator validator = new InputValidator(limits);
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        Path dir = Files.createTempDirectory("trainwatch-cpu");
        HistoryStore store = "sqlite".equals(history) ? HistoryStore.open(dir) : null;
        HistoryRecorder recorder = null;
        if (store != null) {
            recorder = new HistoryRecorder(store, spec -> Optional.empty(), outcome -> { }, System.err::println,
                    Duration.ofSeconds(2), Clock.systemUTC());
            fleet.addListener(recorder);
            recorder.start();
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long step = 0;
        int host = 0;
        // Warm-up (JIT) with the same operations, then the measured ones.
        for (int phase = 0; phase < 2; phase++) {
            long thread0 = threads.getCurrentThreadCpuTime();
            long process0 = os.getProcessCpuTime();
            long wall0 = System.nanoTime();
            for (int i = 0; i < operations; i++) {
                host = (host + 1) % payloads.hosts();
                AgentBatch batch = decoder.batch(payloads.next(host), null);
                validator.check(batch);
                fleet.ingestBatch(batch);
                fleet.ingestSteps("run-" + (host / 8),
                        List.of(StepEvent.of(++step, 1.25, System.currentTimeMillis() / 1000.0)));
            }
            if (phase == 1) {
                double thread = (threads.getCurrentThreadCpuTime() - thread0) / 1e3 / operations;
                double process = (os.getProcessCpuTime() - process0) / 1e3 / operations;
                double wall = (System.nanoTime() - wall0) / 1e3 / operations;
                System.out.printf(Locale.ROOT, "round %d history=%-6s ops=%d  ingest thread CPU %.1f µs/op"
                                + "  process CPU %.1f µs/op  wall %.1f µs/op  load %.1f%n", round, history,
                        operations, thread, process, wall, os.getSystemLoadAverage());
            }
        }
        if (recorder != null) {
            recorder.close();
            System.out.printf(Locale.ROOT, "           history writer: %s%n", recorder.writer().stats());
            store.close();
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
