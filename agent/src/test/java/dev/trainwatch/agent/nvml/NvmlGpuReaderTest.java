package dev.trainwatch.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The production JNA path against the fake library of a current driver, playing two-gpus.scenario. */
class NvmlGpuReaderTest {

    static final String GPU0 = "GPU-11111111-2222-3333-4444-555555555555";
    static final String GPU1 = "GPU-66666666-7777-8888-9999-000000000000";
    static final double EPOCH = 1767225600;
    static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    final Path lib = FakeNvml.library();
    final FakeNvml.Control fake = FakeNvml.control(lib);
    final Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:11Z"), ZoneOffset.UTC);
    final List<NvmlGpuReader> opened = new ArrayList<>();

    @BeforeEach
    void playScenario() {
        fake.play(FakeNvml.bundledScenario("two-gpus.scenario", dir), 11);
    }

    @AfterEach
    void everyAcquireReleased() {
        opened.forEach(NvmlGpuReader::close);
        assertThat(fake.fake_nvml_refcount()).as("nvmlInit without nvmlShutdown").isZero();
    }

    NvmlGpuReader open() throws GpuUnavailableException {
        NvmlGpuReader r = NvmlGpuReader.open(Optional.of(lib), clock);
        opened.add(r);
        return r;
    }

    @Test
    void everyReadingEqualsTheScenario() throws Exception {
        NvmlGpuReader reader = open();
        assertThat(reader.driverVersion()).isEqualTo("535.261.03");
        assertThat(BoundSymbols.of(reader)).containsEntry("init", "nvmlInit_v2")
                .containsEntry("memory", "nvmlDeviceGetMemoryInfo_v2")
                .containsEntry("pci", "nvmlDeviceGetPciInfo_v3")
                .containsEntry("clock_event_reasons", "nvmlDeviceGetCurrentClocksEventReasons")
                .containsEntry("processes", "nvmlDeviceGetComputeRunningProcesses_v3")
                .containsEntry("process_stride", "24")
                .containsEntry("event_wait", "nvmlEventSetWait_v2");

        List<GpuSample> samples = reader.readAll();
        assertThat(samples).hasSize(2);
        GpuSample g0 = samples.get(0);
        assertThat(g0.ts()).isEqualTo(EPOCH + 11);
        assertThat(g0.index()).isZero();
        assertThat(g0.uuid()).isEqualTo(GPU0);
        assertThat(g0.name()).isEqualTo("NVIDIA A100-SXM4-80GB");
        assertThat(g0.pciBusId()).isEqualTo("00000000:07:00.0");
        // memory ramps linearly from 1 GiB at t=0 to 61 GiB at t=60: 12 GiB at t=11
        assertThat(g0.memoryTotalBytes()).isEqualTo(80 * GIB);
        assertThat(g0.memoryUsedBytes()).isEqualTo(12 * GIB);
        assertThat(g0.memoryReservedBytes()).isEqualTo(670040064L);
        assertThat(g0.memoryFreeBytes()).isEqualTo(80 * GIB - 12 * GIB - 670040064L);
        assertThat(g0.utilizationRatio()).isEqualTo(1.0);
        assertThat(g0.memoryUtilizationRatio()).isEqualTo(0.45);
        assertThat(g0.smClockHz()).isEqualTo(1_410_000_000L);
        assertThat(g0.smClockMaxHz()).isEqualTo(1_410_000_000L);
        assertThat(g0.memClockHz()).isEqualTo(1_593_000_000L);
        assertThat(g0.memClockMaxHz()).isEqualTo(1_593_000_000L);
        assertThat(g0.clockEventReasons()).isEmpty();
        assertThat(g0.powerWatts()).isEqualTo(312.5);
        assertThat(g0.powerLimitWatts()).isEqualTo(400.0);
        assertThat(g0.energyJoules()).isEqualTo(4437.5); // 1000 J + 31250 J * 11/100
        assertThat(g0.temperatureCelsius()).isEqualTo(61.0);
        assertThat(g0.pstate()).isZero();
        assertThat(g0.lost()).isFalse();
        assertThat(g0.processes()).containsExactly(
                new GpuProcess(4242, 33285996544L, 0.87, 0.40),
                new GpuProcess(4243, null, null, null)); // 0xFFFFFFFFFFFFFFFF: memory unknown
        GpuSample g1 = samples.get(1);
        assertThat(g1.uuid()).isEqualTo(GPU1);
        assertThat(g1.pciBusId()).isEqualTo("00000000:0F:00.0");
        assertThat(g1.memoryUsedBytes()).isEqualTo(40 * GIB);
        assertThat(g1.processes()).containsExactly(new GpuProcess(4244, 42949672960L, 0.99, 0.51));
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void aStallBetweenTwoPollsShowsInTheUtilisationWindow() throws Exception {
        fake.fake_nvml_set_time(10);
        NvmlGpuReader reader = open();
        reader.readAll(); // consumes the driver's buffer up to t=10
        fake.fake_nvml_set_time(11);
        List<GpuSample> samples = reader.readAll();

        GpuSample g0 = samples.get(0);
        assertThat(g0.utilizationRatio()).as("the point reading misses the stall").isEqualTo(1.0);
        UtilizationWindow w = g0.utilizationWindow();
        // samples every 1/6 s since the last seen (9.83): 10.00 10.17 10.33 10.50 10.67 10.83; zero from 10.3 to 10.7
        assertThat(w.count()).isEqualTo(6);
        assertThat(w.minRatio()).isZero();
        assertThat(w.maxRatio()).isEqualTo(1.0);
        assertThat(w.idleFraction()).isEqualTo(0.5);
        assertThat(w.meanRatio()).isEqualTo(0.5);
        assertThat(w.fromTs()).isCloseTo(EPOCH + 10.00002, within(1e-6));
        assertThat(w.toTs()).isCloseTo(EPOCH + 10.833355, within(1e-6));
        UtilizationWindow w1 = samples.get(1).utilizationWindow();
        assertThat(w1.count()).isEqualTo(6);
        assertThat(w1.idleFraction()).isZero();
        assertThat(w1.minRatio()).isEqualTo(1.0);

        // nothing new without time passing: the window is absent, not empty-and-zero
        assertThat(reader.readAll().get(0).utilizationWindow()).isNull();
    }

    @Test
    void throttlingReasonsAndClocksFollowTheScenario() throws Exception {
        NvmlGpuReader reader = open();
        fake.fake_nvml_set_time(20);
        GpuSample g0 = reader.readAll().get(0);
        assertThat(g0.clockEventReasons()).containsExactly("sw_power_cap", "sw_thermal_slowdown");
        assertThat(g0.smClockHz()).isEqualTo(1_095_000_000L);
    }

    @Test
    void notSupportedIsAbsentAndNotAFailure() throws Exception {
        NvmlGpuReader reader = open();
        fake.fake_nvml_set_time(41);
        List<GpuSample> samples = reader.readAll();
        assertThat(samples.get(0).powerWatts()).isNull();              // NOT_SUPPORTED from t=40
        assertThat(samples.get(0).powerLimitWatts()).isEqualTo(400.0);
        assertThat(samples.get(1).powerWatts()).isEqualTo(312.5);
        assertThat(samples.get(1).processes()).containsExactly(        // per-process utilisation unsupported from t=30
                new GpuProcess(4244, 42949672960L, null, null));
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void readingsMissingFromTheScenarioAreAbsent(@TempDir Path tmp) throws Exception {
        Path s = FakeNvml.scenario().at(0, 0, "memory_total", 1000).at(0, 0, "memory_used", 100).write(tmp.resolve("s"));
        fake.play(s, 1);
        GpuSample g = open().readAll().get(0);
        assertThat(g.memoryTotalBytes()).isEqualTo(1000);
        assertThat(g.memoryReservedBytes()).isZero();
        assertThat(List.of(g.uuid(), g.name(), g.pciBusId())).doesNotContainNull();
        assertThat(g.utilizationRatio()).isNull();
        assertThat(g.utilizationWindow()).isNull();
        assertThat(g.smClockHz()).isNull();
        assertThat(g.smClockMaxHz()).isNull();
        assertThat(g.clockEventReasons()).isNull();
        assertThat(g.powerWatts()).isNull();
        assertThat(g.energyJoules()).isNull();
        assertThat(g.temperatureCelsius()).isNull();
        assertThat(g.pstate()).isNull();
        assertThat(g.processes()).isEmpty();
    }

    @Test
    void failedReadsAreCountedAndTheReadingIsAbsent(@TempDir Path tmp) throws Exception {
        Path s = FakeNvml.scenario().at(0, 0, "temperature_c", 50).at(0, 0, "power_mw", 1000)
                .at(5, 0, "error", "nvmlDeviceGetTemperature 999").write(tmp.resolve("s"));
        fake.play(s, 1);
        NvmlGpuReader reader = open();
        assertThat(reader.readAll().get(0).temperatureCelsius()).isEqualTo(50.0);
        fake.fake_nvml_set_time(6);
        GpuSample g = reader.readAll().get(0);
        assertThat(g.temperatureCelsius()).isNull();
        assertThat(g.powerWatts()).isEqualTo(1.0);
        assertThat(reader.failedReads()).isEqualTo(1);
    }

    @Test
    void aLostGpuIsReportedOnceAndTheOthersContinue(@TempDir Path tmp) throws Exception {
        Path s = FakeNvml.bundledScenario("two-gpus.scenario", tmp);
        java.nio.file.Files.writeString(s, "15 1 lost\n", java.nio.file.StandardOpenOption.APPEND);
        fake.play(s, 11);
        NvmlGpuReader reader = open();
        assertThat(reader.readAll()).extracting(GpuSample::lost).containsExactly(false, false);
        assertThat(reader.drainEvents()).isEmpty();

        fake.fake_nvml_set_time(16);
        List<GpuSample> samples = reader.readAll();
        assertThat(samples.get(0).lost()).isFalse();
        assertThat(samples.get(0).memoryUsedBytes()).isNotNull();
        GpuSample lost = samples.get(1);
        assertThat(lost.lost()).isTrue();
        assertThat(lost.uuid()).isEqualTo(GPU1);
        assertThat(lost.memoryUsedBytes()).isNull();
        assertThat(lost.processes()).isNull();
        List<AgentEvent> events = reader.drainEvents();
        // (the scenario's XID at 12.5 may arrive meanwhile from the event thread)
        assertThat(events).filteredOn(e -> !e.kind().equals("xid")).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo("gpu_lost");
            assertThat(e.gpuUuid()).isEqualTo(GPU1);
            assertThat(e.message()).contains("GPU 1").contains("lost");
        });

        fake.fake_nvml_set_time(17);
        assertThat(reader.readAll().get(1).lost()).isTrue();
        assertThat(reader.drainEvents()).as("reported once").noneMatch(e -> e.kind().equals("gpu_lost"));
    }

    @Test
    void xidEventsArriveFromTheEventThread() throws Exception {
        NvmlGpuReader reader = open();
        assertThat(reader.drainEvents()).isEmpty();
        fake.fake_nvml_set_time(13); // the scenario's XID 79 on GPU 0 is due at 12.5
        List<AgentEvent> got = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> got.addAll(reader.drainEvents()) || !got.isEmpty());
        assertThat(got).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo("xid");
            assertThat(e.xid()).isEqualTo(79L);
            assertThat(e.gpuUuid()).isEqualTo(GPU0);
            assertThat(e.ts()).isEqualTo(EPOCH + 11);
        });
    }

    @Test
    void memoryFallsBackToVersion1WhenTheDriverRejectsTheStructVersion(@TempDir Path tmp) throws Exception {
        Path s = FakeNvml.bundledScenario("two-gpus.scenario", tmp);
        java.nio.file.Files.writeString(s, "0 * error nvmlDeviceGetMemoryInfo_v2 25\n",
                java.nio.file.StandardOpenOption.APPEND);
        fake.play(s, 11);
        NvmlGpuReader reader = open();
        GpuSample g0 = reader.readAll().get(0);
        assertThat(g0.memoryReservedBytes()).isNull();
        assertThat(g0.memoryUsedBytes()).as("v1 counts the reservation as used").isEqualTo(12 * GIB + 670040064L);
        assertThat(g0.memoryFreeBytes()).isEqualTo(80 * GIB - 12 * GIB - 670040064L);
        assertThat(BoundSymbols.of(reader)).containsEntry("memory", "nvmlDeviceGetMemoryInfo");
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void memoryFallsBackToVersion1WhereVersion2IsNotSupported(@TempDir Path tmp) throws Exception {
        Path s = FakeNvml.bundledScenario("two-gpus.scenario", tmp);
        java.nio.file.Files.writeString(s, "0 1 error nvmlDeviceGetMemoryInfo_v2 3\n",
                java.nio.file.StandardOpenOption.APPEND);
        fake.play(s, 11);
        NvmlGpuReader reader = open();
        List<GpuSample> samples = reader.readAll();
        assertThat(samples.get(0).memoryReservedBytes()).isEqualTo(670040064L);
        assertThat(samples.get(1).memoryReservedBytes()).isNull();
        assertThat(samples.get(1).memoryUsedBytes()).isEqualTo(40 * GIB + 670040064L);
        assertThat(reader.failedReads()).isZero();
    }

    @Test
    void buffersGrowWhenTheDriverHasMoreThanFits(@TempDir Path tmp) throws Exception {
        StringBuilder procs = new StringBuilder();
        for (int pid = 1000; pid < 1040; pid++) {
            procs.append(pid).append(":").append(pid * 1000L).append(":").append(pid % 100).append(":1 ");
        }
        Path s = FakeNvml.scenario().global("sample_period_ms", 50).at(0, 0, "util_gpu", 50)
                .at(0, 0, "memory_total", 85899345920L).at(0, 0, "memory_used", 1)
                .at(0, 0, "processes", procs).write(tmp.resolve("s"));
        fake.play(s, 30);
        GpuSample g = open().readAll().get(0);
        assertThat(g.utilizationWindow().count()).as("20 s of samples every 50 ms").isEqualTo(400);
        assertThat(g.processes()).hasSize(40);
        assertThat(g.processes().get(39)).isEqualTo(new GpuProcess(1039, 1039000L, 0.39, 0.01));
    }

    @Test
    void aProcessListThatMakesNoSenseIsDroppedAndCounted(@TempDir Path tmp) throws Exception {
        Path s = FakeNvml.scenario().at(0, 0, "memory_total", 1000).at(0, 0, "memory_used", 1)
                .at(0, 0, "processes", "77:500 78:5000").write(tmp.resolve("s"));
        fake.play(s, 1);
        NvmlGpuReader reader = open();
        assertThat(reader.readAll().get(0).processes()).as("more memory than the GPU has: wrong stride").isNull();
        assertThat(reader.failedReads()).isEqualTo(1);
    }

    @Test
    void initFailureNamesTheCauseAndIsNotFollowedByShutdown(@TempDir Path tmp) {
        long shutdowns = fake.fake_nvml_shutdown_calls();
        fake.play(FakeNvml.scenario().global("error", "nvmlInit_v2 9").write(tmp.resolve("s")), 0);
        assertThatThrownBy(() -> open()).isInstanceOf(GpuUnavailableException.class)
                .hasMessage("NVIDIA driver not loaded (NVML: Driver Not Loaded)");
        fake.play(FakeNvml.scenario().global("error", "nvmlInit_v2 4").write(tmp.resolve("s")), 0);
        assertThatThrownBy(() -> open())
                .hasMessageStartingWith("no permission to use the NVIDIA driver (NVML: Insufficient Permissions)")
                .hasMessageContaining("/dev/nvidiactl");
        assertThat(fake.fake_nvml_shutdown_calls()).isEqualTo(shutdowns);
    }

    @Test
    void aFailureAfterInitReleasesNvmlExactlyOnce(@TempDir Path tmp) {
        long inits = fake.fake_nvml_init_calls();
        long shutdowns = fake.fake_nvml_shutdown_calls();
        fake.play(FakeNvml.scenario().at(0, 0, "memory_total", 1).global("error", "nvmlDeviceGetCount_v2 999")
                .write(tmp.resolve("s")), 0);
        assertThatThrownBy(() -> open()).isInstanceOf(GpuUnavailableException.class)
                .hasMessage("NVML cannot count the GPUs: Unknown Error (code 999)");
        assertThat(fake.fake_nvml_init_calls() - inits).isEqualTo(1);
        assertThat(fake.fake_nvml_shutdown_calls() - shutdowns).isEqualTo(1);
        // refcount 0 is checked after each test
    }

    @Test
    void closeIsIdempotentAndReleasesOnce() throws Exception {
        long shutdowns = fake.fake_nvml_shutdown_calls();
        NvmlGpuReader reader = open();
        assertThat(fake.fake_nvml_refcount()).isEqualTo(1);
        reader.close();
        reader.close();
        assertThat(fake.fake_nvml_shutdown_calls() - shutdowns).isEqualTo(1);
        assertThatThrownBy(reader::readAll).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void whenNvmlIsShutDownUnderItTheReaderInitialisesAgainAndRereadsIdentity() throws Exception {
        NvmlGpuReader reader = open();
        reader.readAll();
        fake.nvmlShutdown(); // another user in the process released one reference too many
        assertThat(fake.fake_nvml_refcount()).isZero();
        List<GpuSample> during = reader.readAll();
        assertThat(during).extracting(GpuSample::uuid).containsExactly(GPU0, GPU1);
        assertThat(during.get(0).memoryUsedBytes()).isNull();
        List<GpuSample> after = reader.readAll();
        assertThat(after.get(0).memoryUsedBytes()).isEqualTo(12 * GIB);
        assertThat(after.get(1).pciBusId()).isEqualTo("00000000:0F:00.0");
        assertThat(fake.fake_nvml_refcount()).as("holds exactly one reference again").isEqualTo(1);
    }
}
