package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.CollectorConfig;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.http.BodyDecoder;
import dev.trainwatch.collector.http.InputValidator;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.state.IngestResult;
import dev.trainwatch.collector.support.FixedPredictor;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Agent batches of 64 GPUs through the collector's ingest path (gzip-free decode with the wire codec, range
 * validation, {@link Fleet#ingestBatch}) next to the raw Jackson parse of the same bytes, the ceiling. One
 * operation = one batch = 64 GPU samples. 16 hosts, so the fleet tracks 1,024 GPUs in 2 runs per 8 hosts.
 *
 * <p>Run: see docs/PERFORMANCE.md ("Collector: ingest and scrape").
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

    @Setup
    public void setUp() {
        Clock clock = Clock.systemUTC();
        payloads = new BenchPayloads(16, clock.millis() / 1000.0);
        CollectorConfig.Limits limits = CollectorConfig.Limits.defaults();
        decoder = new BodyDecoder(limits.maxInflatedBytes());
        validator = new InputValidator(limits);
        fleet = new Fleet(new FixedPredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults());
    }

    private byte[] nextPayload() {
        host = (host + 1) % payloads.hosts();
        return payloads.next(host);
    }

    @Benchmark
    public AgentBatch rawJacksonParse() throws IOException {
        return Json.MAPPER.readValue(nextPayload(), AgentBatch.class);
    }

    @Benchmark
    public IngestResult ingestPath() {
        AgentBatch batch = decoder.batch(decoder.decode(nextPayload(), null));
        validator.check(batch);
        return fleet.ingestBatch(batch);
    }
}
