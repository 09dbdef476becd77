package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.history.HistoryRecorder;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.collector.ingest.BodyDecoder;
import dev.trainwatch.collector.ingest.InputValidator;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.state.IngestResult;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Agent batches of 64 GPUs through the collector's ingest path (gzip-free decode with the wire codec, range
 * validation, {@link Fleet#ingestBatch}) next to the raw Jackson parse of the same bytes, the ceiling. One
 * operation = one batch = 64 GPU samples. 16 hosts, so the fleet tracks 1,024 GPUs in 2 runs per 8 hosts.
 * {@code ingestWithSteps} adds one pushed step report of the batch's run per operation (a run summary's numbers
 * move on every operation). With {@code history=sqlite} the fleet has the run history listening, on a real SQLite
 * database in a temporary directory, as {@code trainwatch collector --data-dir} has.
 *
 * <p>Run: see docs/PERFORMANCE.md ("Collector: in-process costs").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgs = {"-Xmx1g"})
public class IngestBenchmark {

    private BenchPayloads payloads;
    private BodyDecoder decoder;
    private InputValidator validator;
    private Fleet fleet;
    private int host;
    private long step;
    private HistoryStore store;
    private HistoryRecorder recorder;
    private Path dataDir;

    /** {@code none}: no history; {@code sqlite}: the history recorder on a SQLite file listens to the fleet. */
    @Param({"none", "sqlite"})
    public String history;

    @Setup
    public void setUp() throws IOException {
        Clock clock = Clock.systemUTC();
        payloads = new BenchPayloads(16, clock.millis() / 1000.0);
        CollectorConfig.Limits limits = CollectorConfig.Limits.defaults();
        decoder = new BodyDecoder(limits.maxInflatedBytes());
        validator = new InputValidator(limits);
        fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
        if ("sqlite".equals(history)) {
            dataDir = Files.createTempDirectory("trainwatch-bench");
            store = HistoryStore.open(dataDir);
            recorder = new HistoryRecorder(store, spec -> Optional.empty(), outcome -> { }, System.err::println,
                    Duration.ofSeconds(2), Clock.systemUTC());
            fleet.addListener(recorder);
            recorder.start();
        }
    }

    @TearDown
    public void tearDown() throws IOException {
        if (store != null) {
            recorder.close();
            store.close();
            try (var files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private byte[] nextPayload() {
        host = (host + 1) % payloads.hosts();
        return payloads.next(host);
    }

    @Benchmark
    public AgentBatch rawJacksonParse() throws IOException {
        return Json.MAPPER.readValue(nextPayload(), AgentBatch.class);
    }

    /** What the edge does to a batch before validation: the plain reader (databind when it declines). */
    @Benchmark
    public AgentBatch decodeBatch() {
        return decoder.batch(nextPayload(), null);
    }

    @Benchmark
    public IngestResult ingestPath() {
        AgentBatch batch = decoder.batch(nextPayload(), null);
        validator.check(batch);
        return fleet.ingestBatch(batch);
    }

    @Benchmark
    public IngestResult ingestWithSteps() {
        IngestResult result = ingestPath();
        fleet.ingestSteps("run-" + (host / 8), List.of(StepEvent.of(++step, 1.25, System.currentTimeMillis() / 1000.0)));
        return result;
    }
}
