package dev.trainwatch.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
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
        ProcessBuilder pb = new ProcessBuilder("python3", POLLER.toString(), lib.toString(), "read");
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
