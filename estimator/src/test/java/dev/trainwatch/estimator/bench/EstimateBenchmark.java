package dev.trainwatch.estimator.bench;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * How long one full estimate takes after warm-up (peak memory, step time, largest batch by bisection, every
 * suggestion and note). The collector re-estimates whenever a run changes, so this must stay well under 1 ms.
 *
 * <p>Run: {@code ./mvnw -B -o -q -pl estimator test-compile exec:exec -Dexec.executable=java
 * -Dexec.classpathScope=test -Dexec.args="-cp %classpath dev.trainwatch.estimator.bench.EstimateBenchmark"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EstimateBenchmark {

    @Param({"pixart-sigma-online-a800", "sana-1600m-a40", "dit-xl-2-8xa100", "opensora-1.2-zero2-h100",
            "opensora-2.0-stage1-buckets", "flux-lora-fp8-rtx4090", "flux-lora-bf16-rtx4090-too-big"})
    public String scenario;

    private Estimator estimator;
    private RunSpec spec;

    @Setup
    public void setUp() {
        estimator = Estimator.bundled();
        spec = switch (scenario) {
            case "pixart-sigma-online-a800" -> new RunSpec("pixart-sigma-xl-2", "a800-80gb", 8, 20, 1024, null, null,
                    null, "fp16", "came", true, false, "online", 0, null, 1, 100_000L);
            case "sana-1600m-a40" -> new RunSpec("sana-1600m", "a40", 1, 1, 1024, null, null, null, "fp16", "came",
                    true, false, "online", 0, null, 1, null);
            case "opensora-1.2-zero2-h100" -> new RunSpec("opensora-1.2", "h100-sxm", 8, 4, 512, null, null, 51,
                    "bf16", "adamw", true, true, "online", 2, null, 1, null)
                    .withRegime(null, null, "mixed", java.util.List.of(20, 20), 4, null);
            // Open-Sora 2.0's stage-1 config as read from the repository: 35 frames x resolution buckets.
            case "opensora-2.0-stage1-buckets" -> dev.trainwatch.estimator.config.BundledConfigs.read(config(
                    "/configs/opensora/configs/diffusion/train/stage1.py")).overriddenBy(new RunSpec(null, "h200", 64,
                    null, null, null, null, null, null, null, null, null, null, null, null, null, null));
            // A kohya-style Flux LoRA on a 24 GB card; the bf16 base does not fit, so its suggestions search the
            // blocks to swap and the GPUs to shard over.
            case "flux-lora-fp8-rtx4090", "flux-lora-bf16-rtx4090-too-big" -> new RunSpec("flux.1-dev", "rtx4090", 1,
                    1, 1024, null, null, null, "bf16", "adamw8bit", true, false, "precomputed", null, "flash", null,
                    null).withPhysics(null, null, 16, java.util.List.of("attention", "mlp", "modulation"), null, null)
                    .withTrainer(scenario.contains("fp8") ? "fp8" : null, null);
            default -> new RunSpec("dit-xl-2", "NVIDIA A100-SXM4-80GB", 8, 32, 256, null, null, null, "tf32",
                    "adamw", false, true, "online", 0, null, 1, 400_000L);
        };
    }

    private static java.nio.file.Path config(String resource) {
        try {
            return java.nio.file.Path.of(EstimateBenchmark.class.getResource(resource).toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Benchmark
    public Estimate estimate() {
        return estimator.estimate(spec);
    }

    /**
     * Runs the JMH benchmark, then prints the CPU time per estimate of the calling thread, which a machine shared
     * with other builds inflates far less than JMH's wall-clock average.
     */
    public static void main(String[] args) throws RunnerException {
        new Runner(new OptionsBuilder().include(EstimateBenchmark.class.getSimpleName()).build()).run();
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        for (String name : new String[] {"pixart-sigma-online-a800", "sana-1600m-a40", "dit-xl-2-8xa100",
                "opensora-1.2-zero2-h100", "opensora-2.0-stage1-buckets", "flux-lora-fp8-rtx4090",
                "flux-lora-bf16-rtx4090-too-big"}) {
            EstimateBenchmark b = new EstimateBenchmark();
            b.scenario = name;
            b.setUp();
            int n = 50_000;
            Estimate sink = null;
            for (int i = 0; i < n; i++) {
                sink = b.estimate();
            }
            long cpu = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < n; i++) {
                sink = b.estimate();
            }
            cpu = threads.getCurrentThreadCpuTime() - cpu;
            System.out.printf(java.util.Locale.ROOT, "CPU time per estimate %-26s %8.1f us (%d suggestions)%n", name,
                    cpu / 1e3 / n, sink.suggestions().size());
        }
    }
}
