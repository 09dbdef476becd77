package dev.trainwatch.agent.nvml;

import dev.trainwatch.protocol.testing.SettableClock;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.protocol.GpuSample;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CPU time per GPU-sample of the full reading set against the fake library, side by side in one run with a
 * pynvml poller reading the same fields from the same fake. Not a unit test (timing): runs only with
 * {@code -Dtrainwatch.bench=true}; with {@code -Dtrainwatch.bench.nvtop=PATH} nvtop is measured too. The command
 * and figures are in docs/PERFORMANCE.md.
 */
class NvmlPollBenchmark {

    static final int GPUS = 8;

    @TempDir
    Path dir;

    /**
     * Eight GPUs with every reading supported, two processes each with per-process utilisation; with
     * {@code activity}, GPM metrics and NVLink counters too (as on an H100 node).
     */
    static Path eightGpus(Path file, boolean activity) {
        FakeNvml.Scenario s = FakeNvml.scenario().global("gpus", GPUS);
        for (int i = 0; i < GPUS; i++) {
            s.at(0, i, "uuid", String.format(Locale.ROOT, "GPU-bench000-0000-0000-0000-%012d", i))
                    .at(0, i, "name", "NVIDIA H100 80GB HBM3")
                    .at(0, i, "processes", (1000 + 2 * i) + ":40000000000:80:30 " + (1001 + 2 * i) + ":2000000000:5:1");
        }
        s.all(0, "memory_total", 85899345920L).all(0, "memory_reserved", 600000000L).all(0, "memory_used", 60000000000L)
                .all(0, "util_gpu", 97).all(0, "util_mem", 40).all(0, "sm_clock_mhz", 1980).all(0, "mem_clock_mhz", 2619)
                .all(0, "max_sm_clock_mhz", 1980).all(0, "max_mem_clock_mhz", 2619).all(0, "clock_reasons", "0x4")
                .all(0, "power_mw", 650000).all(0, "power_limit_mw", 700000).all(0, "energy_mj", 1000000)
                .all(100000, "energy_mj", "~70000000000").all(0, "temperature_c", 71).all(0, "pstate", 0);
        if (activity) {
            s.all(0, "gpm_sm_util", 92).all(0, "gpm_sm_occupancy", 38.5).all(0, "gpm_any_tensor_util", 61)
                    .all(0, "gpm_hmma_tensor_util", 58).all(0, "gpm_dram_bw_util", 44).all(0, "gpm_pcie_tx_mibps", 120)
                    .all(0, "gpm_pcie_rx_mibps", 2048).all(0, "gpm_nvlink_tx_mibps", 51200)
                    .all(0, "gpm_nvlink_rx_mibps", 49152).all(0, "nvlink_tx_kib", 0)
                    .all(100000, "nvlink_tx_kib", "~5242880000000").all(0, "nvlink_rx_kib", 0)
                    .all(100000, "nvlink_rx_kib", "~5242880000000");
        }
        return s.write(file);
    }

    @Test
    void cpuPerGpuSampleAgainstPynvml() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("trainwatch.bench"), "benchmark: run with -Dtrainwatch.bench=true");
        int javaPolls = Integer.getInteger("trainwatch.bench.polls", 20000);
        int pyPolls = Integer.getInteger("trainwatch.bench.pyPolls", 2000);
        Path lib = FakeNvml.library();
        boolean activity = Boolean.parseBoolean(System.getProperty("trainwatch.bench.activity", "true"));
        Path scenario = eightGpus(dir.resolve("bench.scenario"), activity);
        FakeNvml.Control fake = FakeNvml.control(lib);
        fake.play(scenario, 1000);

        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double javaUs;
        double javaWallUs;
        // The reader's clock follows the fake's: one second per poll (GPM needs its samples 100 ms apart).
        SettableClock clock = SettableClock.atSeconds(ActivityCountersTest.EPOCH);
        clock.setSeconds(ActivityCountersTest.EPOCH + 1000);
        try (NvmlGpuReader reader = NvmlGpuReader.open(Optional.of(lib), clock)) {
            double t = 1000;
            reader.readAll(); // the first GPM sample
            for (int i = 0; i < javaPolls; i++) { // warm-up: JIT
                fake.fake_nvml_set_time(++t);
                clock.setSeconds(ActivityCountersTest.EPOCH + t);
                check(reader.readAll(), activity);
            }
            long cpu0 = mx.getCurrentThreadCpuTime();
            long wall0 = System.nanoTime();
            for (int i = 0; i < javaPolls; i++) {
                fake.fake_nvml_set_time(++t); // 1 s per poll, as at 1 Hz: new samples every poll
                clock.setSeconds(ActivityCountersTest.EPOCH + t);
                check(reader.readAll(), activity);
            }
            javaUs = (mx.getCurrentThreadCpuTime() - cpu0) / 1e3 / ((double) javaPolls * GPUS);
            javaWallUs = (System.nanoTime() - wall0) / 1e3 / ((double) javaPolls * GPUS);
            assertThat(reader.failedReads()).isZero();
        }

        ProcessBuilder pb = new ProcessBuilder("python3", PynvmlParityIT.POLLER.toString(), lib.toString(), "bench",
                Integer.toString(pyPolls));
        pb.environment().put("PYTHONPATH", RealLibraryIT.buildDeps().resolve("pynvml").toString());
        pb.environment().put(FakeNvml.SCENARIO_ENV, scenario.toString());
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process proc = pb.start();
        JsonNode py = new ObjectMapper().readTree(proc.getInputStream().readAllBytes());
        assertThat(proc.waitFor(10, TimeUnit.MINUTES)).isTrue();
        double pyUs = py.get("thread_cpu_us_per_gpu_sample").asDouble();

        String nvtopLine = "";
        String nvtop = System.getProperty("trainwatch.bench.nvtop");
        if (nvtop != null && !nvtop.isBlank()) {
            // nvtop reads its own set of fields and draws a screen; it only runs in a terminal (see the script).
            Process p = new ProcessBuilder("bash", "src/test/bench/nvtop-cpu.sh", nvtop, lib.getParent().toString(),
                    scenario.toString(), Integer.getInteger("trainwatch.bench.nvtopSeconds", 30).toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            JsonNode nv = new ObjectMapper().readTree(p.getInputStream().readAllBytes());
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
            double us = nv.get("cpu_seconds").asDouble() * 1e6 / nv.get("gpu_samples").asDouble();
            nvtopLine = String.format(Locale.ROOT,
                    "  nvtop 3.0.1       %7.2f µs CPU per GPU-sample (process, incl. drawing), %d GPU-samples in %.0f s%n",
                    us, nv.get("gpu_samples").asLong(), nv.get("wall_seconds").asDouble());
        }
        String report = String.format(Locale.ROOT,
                "NVML poll, %d GPUs, full reading set%s, fake library%n"
                        + "  trainwatch (JNA)  %7.2f µs CPU per GPU-sample (poll thread; wall %.2f µs), %d polls%n"
                        + "  pynvml poller     %7.2f µs CPU per GPU-sample (thread; process %.2f µs), %d polls%n"
                        + "  ratio             %7.1fx%n",
                GPUS, activity ? " with GPM and NVLink counters" : " without activity counters", javaUs, javaWallUs, javaPolls, pyUs, py.get("process_cpu_us_per_gpu_sample").asDouble(),
                pyPolls, pyUs / javaUs) + nvtopLine;
        System.out.print(report);
        Files.writeString(Path.of("target/nvml-bench.txt"), report, StandardCharsets.UTF_8);
        assertThat(javaUs).as("target: ≤ 20 µs per GPU-sample").isLessThanOrEqualTo(20.0);
        assertThat(pyUs / javaUs).as("at least 5× cheaper than pynvml").isGreaterThanOrEqualTo(5.0);
    }

    private static void check(List<GpuSample> samples, boolean activity) {
        if (samples.size() != GPUS || samples.get(GPUS - 1).processes().size() != 2
                || samples.get(0).utilizationWindow() == null
                || activity && (samples.get(GPUS - 1).activity() == null
                        || samples.get(GPUS - 1).activity().tensorActiveRatio() == null
                        || samples.get(GPUS - 1).activity().nvlinkRxBytes() == null)) {
            throw new AssertionError("incomplete poll: " + samples);
        }
    }
}
