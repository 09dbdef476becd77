package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Catch-up speed: how fast {@link LogTailer} reads and parses a large PixArt-format log it attaches to with
 * unlimited history — the worst case, a run whose whole log is read at once. The log (about 200 MB, in a temp
 * dir, deleted afterwards) mixes step lines with the noise a real one holds: logger lines, warnings,
 * ANSI-coloured lines, tqdm frames on carriage returns, and tracebacks. The file sits in the page cache, so this
 * measures parsing, not the disk.
 *
 * <p>Run (see docs/PERFORMANCE.md): {@code ./mvnw -B -o -q test-compile -pl agent -am}, then
 * {@code ./mvnw -B -o -q exec:exec -pl agent -Dexec.classpathScope=test -Dexec.executable=java
 * "-Dexec.args=-Xmx256m -cp %classpath dev.trainwatch.agent.log.LogCatchUpBenchmark"} (append {@code jmh} to the
 * arguments for the JMH run).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 8)
@Fork(value = 1, jvmArgs = {"-Xms256m", "-Xmx256m"})
public class LogCatchUpBenchmark {

    @Param({"200"})
    public int megabytes;

    private Path dir;
    private Path file;
    private long size;

    @Setup(Level.Trial)
    public void generate() throws IOException {
        dir = Files.createTempDirectory("trainwatch-bench");
        file = dir.resolve("train_log.log");
        size = writeLog(file, megabytes * 1_000_000L);
    }

    @TearDown(Level.Trial)
    public void cleanUp() throws IOException {
        Files.deleteIfExists(file);
        Files.deleteIfExists(dir);
    }

    @Benchmark
    public long catchUp() {
        long steps = 0;
        try (LogTailer t = new LogTailer(file, StepLineParsers.forFormat("pixart"),
                Clock.systemUTC().withZone(ZoneOffset.UTC), Long.MAX_VALUE, LogTailer.DEFAULT_MAX_LINE_BYTES)) {
            List<StepEvent> events;
            while (!(events = t.poll()).isEmpty()) {
                steps += events.size();
            }
        }
        if (steps == 0) {
            throw new IllegalStateException("no steps parsed");
        }
        return steps;
    }

    /** Writes a realistic PixArt-Σ log of about {@code target} bytes; returns its size. */
    static long writeLog(Path file, long target) throws IOException {
        Random random = new Random(42);
        long written = 0;
        long step = 0;
        long seconds = 0;
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            while (written < target) {
                step += 20;
                seconds += 36;
                String stamp = String.format(Locale.ROOT, "2024-05-%02d %02d:%02d:%02d,%03d", 14 + seconds / 86400 % 14,
                        seconds / 3600 % 24, seconds / 60 % 60, seconds % 60, random.nextInt(1000));
                StringBuilder b = new StringBuilder(640);
                b.append(stamp).append(" - PixArt - INFO - Step/Epoch [").append(step).append('/')
                        .append(step / 2500 + 1).append("][").append(step % 2500 + 1).append("/2500]:total_eta: ")
                        .append("3 days, 1:02:03, epoch_eta:0:40:12, time_all:")
                        .append(String.format(Locale.ROOT, "%.3f", 1.7 + random.nextDouble() * 0.2))
                        .append(", time_data:").append(String.format(Locale.ROOT, "%.3f", 0.6 + random.nextDouble() * 0.05))
                        .append(", lr:2.000e-05, s:(").append(96 + 16 * random.nextInt(5)).append(", ")
                        .append(96 + 16 * random.nextInt(5)).append("), loss:")
                        .append(String.format(Locale.ROOT, "%.4f", 0.1 + random.nextDouble() * 0.1))
                        .append(", grad_norm:").append(String.format(Locale.ROOT, "%.4f", 0.5 + random.nextDouble() * 0.1))
                        .append('\n');
                switch ((int) (step / 20 % 4)) {
                    case 0 -> b.append("/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: "
                            + "UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed "
                            + "explicitly.\n  warnings.warn(\n");
                    case 1 -> b.append("\u001b[33m").append(stamp).append(" - PixArt - WARNING - Failed to load ")
                            .append("InternData/images/").append(random.nextInt(1_000_000)).append(".jpg, retrying\u001b[0m\n");
                    case 2 -> b.append("Loading:  50%|█████     | 1/2 [00:01<00:01,  1.52s/it]\rLoading: 100%|██████████| "
                            + "2/2 [00:02<00:00,  1.31s/it]\n");
                    default -> b.append("Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/site-"
                            + "packages/PIL/ImageFile.py\", line 249, in load\n    s = read(read_bytes)\n"
                            + "OSError: image file is truncated (47 bytes not processed)\n");
                }
                String chunk = b.toString();
                w.write(chunk);
                written += chunk.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        return Files.size(file);
    }

    /**
     * Without arguments: a self-contained measurement (3 warm-up and 8 measured catch-ups of a fresh ~200 MB log)
     * printing wall-clock MB/s and MB per second of process CPU time (all threads, GC and JIT included); the
     * second figure stays meaningful on a shared, loaded machine where wall time mostly measures waiting for a
     * core. With {@code jmh}: the same catch-up under JMH ({@code SingleShotTime}, one fork).
     */
    public static void main(String[] args) throws RunnerException, IOException {
        if (args.length > 0 && args[0].equals("jmh")) {
            for (RunResult r : new Runner(new OptionsBuilder().include(LogCatchUpBenchmark.class.getSimpleName())
                    .build()).run()) {
                System.out.printf(Locale.ROOT, "JMH: %.0f ms per catch-up of %d MB = %.0f MB/s%n",
                        r.getPrimaryResult().getScore(), 200, 200 / (r.getPrimaryResult().getScore() / 1000.0));
            }
            return;
        }
        LogCatchUpBenchmark bench = new LogCatchUpBenchmark();
        bench.megabytes = 200;
        bench.generate();
        try {
            com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            double mb = bench.size / 1e6;
            double wallSum = 0;
            double cpuSum = 0;
            double bestWall = Double.MAX_VALUE;
            for (int run = 0; run < 11; run++) {
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                long steps = bench.catchUp();
                double wall = (System.nanoTime() - t0) / 1e9;
                double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
                boolean warmup = run < 3;
                System.out.printf(Locale.ROOT, "%s %2d: %.1f MB, %d steps, wall %.2f s (%.0f MB/s), CPU %.2f s "
                        + "(%.0f MB per CPU-second)%n", warmup ? "warm-up" : "run    ", run, mb, steps, wall,
                        mb / wall, cpu, mb / cpu);
                if (!warmup) {
                    wallSum += wall;
                    cpuSum += cpu;
                    bestWall = Math.min(bestWall, wall);
                }
            }
            System.out.printf(Locale.ROOT, "mean of 8: %.0f MB/s wall (best %.0f MB/s), %.0f MB per CPU-second; "
                    + "load average %s%n", 8 * mb / wallSum, mb / bestWall, 8 * mb / cpuSum,
                    Files.readString(Path.of("/proc/loadavg")).trim());
        } finally {
            bench.cleanUp();
        }
    }
}
