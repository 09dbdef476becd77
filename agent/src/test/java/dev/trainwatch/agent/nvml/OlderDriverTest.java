package dev.trainwatch.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fake built as older drivers: fallback symbols and each process-struct stride. */
class OlderDriverTest {

    @TempDir
    Path dir;

    /** Three processes so that a wrong stride would shift the second and third entries. */
    Path scenario() {
        return FakeNvml.scenario()
                .at(0, 0, "uuid", "GPU-aaaaaaaa-0000-0000-0000-000000000001")
                .at(0, 0, "memory_total", 85899345920L).at(0, 0, "memory_reserved", 1000).at(0, 0, "memory_used", 5000)
                .at(0, 0, "clock_reasons", "0x104")
                .at(0, 0, "processes", "101:1073741824 202:na 303:3221225472")
                .at(2, 0, "xid", 48)
                .write(dir.resolve("older.scenario"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "., nvmlDeviceGetComputeRunningProcesses_v3, 24, nvmlDeviceGetCurrentClocksEventReasons, nvmlInit_v2",
        "r535, nvmlDeviceGetComputeRunningProcesses_v3, 32, nvmlDeviceGetCurrentClocksThrottleReasons, nvmlInit_v2",
        "v2procs, nvmlDeviceGetComputeRunningProcesses_v2, 24, nvmlDeviceGetCurrentClocksEventReasons, nvmlInit_v2",
        "legacy, nvmlDeviceGetComputeRunningProcesses, 16, nvmlDeviceGetCurrentClocksThrottleReasons, nvmlInit",
    })
    void eachStrideGivesTheRightPidsAndMemory(String variant, String processCall, int stride, String reasonsCall,
                                             String initCall) throws Exception {
        Path lib = FakeNvml.library(variant);
        FakeNvml.Control fake = FakeNvml.control(lib);
        fake.play(scenario(), 1);
        try (NvmlGpuReader reader = NvmlGpuReader.open(Optional.of(lib), Clock.systemUTC())) {
            assertThat(BoundSymbols.of(reader))
                    .containsEntry("processes", processCall)
                    .containsEntry("process_stride", Integer.toString(stride))
                    .containsEntry("clock_event_reasons", reasonsCall)
                    .containsEntry("init", initCall);
            GpuSample g = reader.readAll().get(0);
            assertThat(g.processes()).containsExactly(
                    new GpuProcess(101, 1073741824L, null, null),
                    new GpuProcess(202, null, null, null),
                    new GpuProcess(303, 3221225472L, null, null));
            assertThat(g.clockEventReasons()).containsExactly("sw_power_cap", "display_clock_setting");
            assertThat(g.uuid()).isEqualTo("GPU-aaaaaaaa-0000-0000-0000-000000000001");
            assertThat(reader.failedReads()).isZero();
        }
        assertThat(fake.fake_nvml_refcount()).isZero();
    }

    @Test
    void anOldDriverGivesVersion1MemoryPciAndEventsThroughTheUnversionedSymbols() throws Exception {
        Path lib = FakeNvml.library(FakeNvml.LEGACY);
        FakeNvml.Control fake = FakeNvml.control(lib);
        fake.play(scenario(), 1);
        try (NvmlGpuReader reader = NvmlGpuReader.open(Optional.of(lib), Clock.systemUTC())) {
            assertThat(BoundSymbols.of(reader))
                    .containsEntry("count", "nvmlDeviceGetCount")
                    .containsEntry("handle", "nvmlDeviceGetHandleByIndex")
                    .containsEntry("pci", "nvmlDeviceGetPciInfo_v2")
                    .containsEntry("memory", "nvmlDeviceGetMemoryInfo")
                    .containsEntry("event_wait", "nvmlEventSetWait");
            GpuSample g = reader.readAll().get(0);
            assertThat(g.memoryReservedBytes()).isNull();
            assertThat(g.memoryUsedBytes()).isEqualTo(6000);
            assertThat(g.memoryFreeBytes()).isEqualTo(85899345920L - 6000);
            assertThat(g.pciBusId()).isEqualTo("00000000:01:00.0");
            fake.fake_nvml_set_time(3);
            List<AgentEvent> got = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> got.addAll(reader.drainEvents()));
            assertThat(got).extracting(AgentEvent::xid).containsExactly(48L);
        }
        assertThat(fake.fake_nvml_refcount()).isZero();
    }
}
