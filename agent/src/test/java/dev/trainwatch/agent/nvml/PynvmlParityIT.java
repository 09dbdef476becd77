package dev.trainwatch.agent.nvml;

import dev.trainwatch.protocol.testing.SettableClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * NVIDIA's own Python binding reads the same fake library and scenario and must see what the agent reports: an
 * independent check that the fake keeps the real ABI and that the agent reads it right.
 */
class PynvmlParityIT {

    static final Path POLLER = Path.of("src/test/python/pynvml_poller.py");

    @TempDir
    Path dir;

    @ParameterizedTest(name = "at t={0}s")
    @ValueSource(doubles = {11, 20, 41})
    void pynvmlSeesWhatTheAgentReports(double t) throws Exception {
        Path lib = FakeNvml.library();
        Path scenario = FakeNvml.bundledScenario("two-gpus.scenario", dir);
        JsonNode py = runPynvml(lib, scenario, t);

        FakeNvml.Control fake = FakeNvml.control(lib);
        fake.play(scenario, t);
        Clock clock = Clock.fixed(Instant.ofEpochSecond(1767225600L + (long) t), ZoneOffset.UTC);
        List<GpuSample> java;
        String driver;
        try (NvmlGpuReader reader = NvmlGpuReader.open(Optional.of(lib), clock)) {
            java = reader.readAll();
            driver = reader.driverVersion();
        }

        assertThat(driver).isEqualTo(py.get("driver").asText());
        assertThat(java).hasSize(py.get("gpus").size());
        for (int i = 0; i < java.size(); i++) {
            compare(java.get(i), py.get("gpus").get(i));
        }
    }

    /**
     * GPM through NVIDIA's own declaration of {@code nvmlGpmMetricsGet_t} (pynvml's ctypes structure), NVLink
     * counters through its {@code nvmlFieldValue_t} with the all-links scope, PCIe through its call: both pollers
     * take a GPM sample at t0 and t1 and must see the same metrics over the interval between them.
     */
    @ParameterizedTest(name = "between t={0}s and one second later")
    @ValueSource(doubles = {5, 10, 40})
    void pynvmlSeesTheSameActivityCounters(double t0) throws Exception {
        double t1 = t0 + 1;
        Path lib = FakeNvml.library();
        Path scenario = FakeNvml.bundledScenario("activity.scenario", dir);
        JsonNode py = runPynvml(lib, scenario, 0, "activity", Double.toString(t0), Double.toString(t1)).get("gpus");

        FakeNvml.Control fake = FakeNvml.control(lib);
        fake.play(scenario, t0);
        SettableClock clock = SettableClock.atSeconds(ActivityCountersTest.EPOCH);
        clock.setSeconds(ActivityCountersTest.EPOCH + t0);
        try (NvmlGpuReader reader = NvmlGpuReader.open(Optional.of(lib), clock)) {
            reader.readAll();
            fake.fake_nvml_set_time(t1);
            clock.setSeconds(ActivityCountersTest.EPOCH + t1);
            List<GpuSample> java = reader.readAll();
            assertThat(java).hasSize(py.size());
            for (int i = 0; i < java.size(); i++) {
                JsonNode p = py.get(i);
                GpuActivity a = java.get(i).activity();
                assertThat(ratio(a == null ? null : a.smActiveRatio())).isEqualTo(gpm(p, "sm_util", 0.01));
                assertThat(ratio(a == null ? null : a.smOccupancyRatio())).isEqualTo(gpm(p, "sm_occupancy", 0.01));
                assertThat(ratio(a == null ? null : a.tensorActiveRatio())).isEqualTo(gpm(p, "any_tensor_util", 0.01));
                assertThat(ratio(a == null ? null : a.tensorHmmaActiveRatio()))
                        .isEqualTo(gpm(p, "hmma_tensor_util", 0.01));
                assertThat(ratio(a == null ? null : a.dramActiveRatio())).isEqualTo(gpm(p, "dram_bw_util", 0.01));
                assertThat(ratio(a == null ? null : a.nvlinkRxBytesPerSecond()))
                        .isEqualTo(gpm(p, "nvlink_rx_mibps", 1024.0 * 1024));
                assertThat(ratio(a == null ? null : a.nvlinkTxBytesPerSecond()))
                        .isEqualTo(gpm(p, "nvlink_tx_mibps", 1024.0 * 1024));
                assertThat(a == null ? null : a.nvlinkTxBytes()).isEqualTo(kib(p, "nvlink_tx_kib"));
                assertThat(a == null ? null : a.nvlinkRxBytes()).isEqualTo(kib(p, "nvlink_rx_kib"));
                if (p.hasNonNull("gpm_pcie_rx_mibps")) {
                    assertThat(a.pcieRxBytesPerSecond()).isEqualTo(p.get("gpm_pcie_rx_mibps").asDouble() * 1024 * 1024);
                    assertThat(a.pcieTxBytesPerSecond()).isEqualTo(p.get("gpm_pcie_tx_mibps").asDouble() * 1024 * 1024);
                }
            }
            // PCIe throughput without GPM is read off the poll thread: wait for it, then compare
            for (int i = 0; i < py.size(); i++) {
                JsonNode p = py.get(i);
                if (p.hasNonNull("pcie_rx_kbps") && !p.hasNonNull("gpm_pcie_rx_mibps")) {
                    int gpu = i;
                    GpuActivity[] seen = new GpuActivity[1];
                    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                        seen[0] = reader.readAll().get(gpu).activity();
                        return seen[0] != null && seen[0].pcieRxBytesPerSecond() != null;
                    });
                    assertThat(seen[0].pcieRxBytesPerSecond()).isEqualTo(p.get("pcie_rx_kbps").asDouble() * 1024);
                    assertThat(seen[0].pcieTxBytesPerSecond()).isEqualTo(p.get("pcie_tx_kbps").asDouble() * 1024);
                }
            }
            assertThat(reader.failedReads()).isZero();
        }
        assertThat(fake.fake_nvml_gpm_samples_live()).isZero();
    }

    /** Rounded to 1e-9 so that two float paths to the same value compare equal. */
    private static Double ratio(Double v) {
        return v == null ? null : Math.round(v * 1e9) / 1e9;
    }

    private static Double gpm(JsonNode p, String key, double scale) {
        JsonNode v = p.get("gpm_" + key);
        return v == null || v.isNull() ? null : ratio(v.asDouble() * scale);
    }

    private static Long kib(JsonNode p, String key) {
        JsonNode v = p.get(key);
        return v == null || v.isNull() ? null : v.asLong() * 1024;
    }

    private static void compare(GpuSample j, JsonNode p) {
        assertThat(j.index()).isEqualTo(p.get("index").asInt());
        assertThat(j.uuid()).isEqualTo(p.get("uuid").asText());
        assertThat(j.name()).isEqualTo(p.get("name").asText());
        assertThat(j.pciBusId()).isEqualTo(p.get("pci_bus_id").asText());
        assertThat(j.memoryTotalBytes()).isEqualTo(p.get("memory_total").asLong());
        assertThat(j.memoryReservedBytes()).isEqualTo(p.get("memory_reserved").asLong());
        assertThat(j.memoryFreeBytes()).isEqualTo(p.get("memory_free").asLong());
        assertThat(j.memoryUsedBytes()).isEqualTo(p.get("memory_used").asLong());
        assertThat(j.utilizationRatio()).isEqualTo(p.get("util_gpu").asInt() / 100.0);
        assertThat(j.memoryUtilizationRatio()).isEqualTo(p.get("util_mem").asInt() / 100.0);
        UtilizationWindow w = j.utilizationWindow();
        JsonNode pw = p.get("window");
        assertThat(w.count()).isEqualTo(pw.get("count").asInt());
        assertThat(w.minRatio()).isEqualTo(pw.get("min").asDouble());
        assertThat(w.maxRatio()).isEqualTo(pw.get("max").asDouble());
        assertThat(w.meanRatio()).isCloseTo(pw.get("mean").asDouble(), within(1e-12));
        assertThat(w.idleFraction()).isCloseTo(pw.get("idle").asDouble(), within(1e-12));
        assertThat(w.fromTs()).isEqualTo(pw.get("from_us").asLong() / 1e6);
        assertThat(w.toTs()).isEqualTo(pw.get("to_us").asLong() / 1e6);
        assertThat(j.smClockHz()).isEqualTo(hz(p, "sm_clock_mhz"));
        assertThat(j.memClockHz()).isEqualTo(hz(p, "mem_clock_mhz"));
        assertThat(j.smClockMaxHz()).isEqualTo(hz(p, "sm_clock_max_mhz"));
        assertThat(j.memClockMaxHz()).isEqualTo(hz(p, "mem_clock_max_mhz"));
        assertThat(j.clockEventReasons()).isEqualTo(ClockEventReasons.names(p.get("clock_reasons").asLong()));
        assertThat(j.powerWatts()).isEqualTo(scaled(p, "power_mw"));
        assertThat(j.powerLimitWatts()).isEqualTo(scaled(p, "power_limit_mw"));
        assertThat(j.energyJoules()).isEqualTo(scaled(p, "energy_mj"));
        assertThat(j.temperatureCelsius()).isEqualTo(p.get("temperature_c").asDouble());
        assertThat(j.pstate()).isEqualTo(p.get("pstate").asInt());
        List<GpuProcess> expected = new ArrayList<>();
        for (JsonNode pp : p.get("processes")) {
            expected.add(new GpuProcess(pp.get("pid").asLong(),
                    pp.get("used_memory").isNull() ? null : pp.get("used_memory").asLong(),
                    pp.get("sm_util").isNull() ? null : pp.get("sm_util").asDouble() / 100.0,
                    pp.get("mem_util").isNull() ? null : pp.get("mem_util").asDouble() / 100.0));
        }
        assertThat(j.processes()).isEqualTo(expected);
    }

    private static Long hz(JsonNode p, String field) {
        return p.get(field).isNull() ? null : p.get(field).asLong() * 1_000_000L;
    }

    private static Double scaled(JsonNode p, String field) {
        return p.get(field).isNull() ? null : p.get(field).asLong() / 1000.0;
    }

    static JsonNode runPynvml(Path lib, Path scenario, double t) throws IOException, InterruptedException {
        return runPynvml(lib, scenario, t, "read");
    }

    static JsonNode runPynvml(Path lib, Path scenario, double t, String... mode)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("python3", POLLER.toString(), lib.toString()));
        command.addAll(List.of(mode));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("PYTHONPATH", RealLibraryIT.buildDeps().resolve("pynvml").toString());
        pb.environment().put(FakeNvml.SCENARIO_ENV, scenario.toString());
        pb.environment().put(FakeNvml.CLOCK_ENV, "fixed:" + t);
        pb.redirectErrorStream(false);
        Process proc = pb.start();
        byte[] out = proc.getInputStream().readAllBytes();
        String err = new String(proc.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(proc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as("pynvml poller failed: %s", err).isZero();
        return new ObjectMapper().readTree(out);
    }
}
