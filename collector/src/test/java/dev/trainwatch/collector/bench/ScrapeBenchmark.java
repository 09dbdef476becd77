package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;
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
 * One {@code GET /metrics} worth of work for 1,024 GPUs and 128 runs: refresh the series from the fleet's views
 * and render the exposition (JVM metrics included, as served).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgs = {"-Xmx1g"})
public class ScrapeBenchmark {

    private MetricsExporter exporter;

    @Setup
    public void setUp() {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = BenchFleet.build(clock);
        exporter = new MetricsExporter(fleet::gpus, fleet::runs, fleet::agents, clock, true);
        String first = exporter.scrape();
        long series = first.lines().filter(l -> l.startsWith("trainwatch_")).count();
        System.out.println("scrape: " + series + " trainwatch series, " + first.length() + " bytes");
    }

    @Benchmark
    public String scrape() {
        return exporter.scrape();
    }
}
