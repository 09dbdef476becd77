package dev.trainwatch.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.agent.GpuReaders;
import dev.trainwatch.protocol.UtilizationWindow;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The parts of the binding that are plain Java. */
class PlainLogicTest {

    @Test
    void clockEventReasonsByName() {
        assertThat(ClockEventReasons.names(0)).isEmpty();
        assertThat(ClockEventReasons.names(0x1FF)).containsExactly("gpu_idle", "applications_clocks_setting",
                "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                "hw_power_brake_slowdown", "display_clock_setting");
        assertThat(ClockEventReasons.names(0x4 | 0x400)).containsExactly("sw_power_cap", "unknown_0x400");
    }

    /**
     * The hardware slowdowns an agent sends at once and {@code throttling} makes critical are exactly what NVML's
     * HW_SLOWDOWN (0x8), HW_THERMAL_SLOWDOWN (0x40) and HW_POWER_BRAKE_SLOWDOWN (0x80) bits read as here.
     */
    @Test
    void theHardwareSlowdownsAreNvmlsThreeHardwareBits() {
        assertThat(ClockEventReasons.names(0x8 | 0x40 | 0x80))
                .containsExactlyInAnyOrderElementsOf(dev.trainwatch.protocol.GpuSample.HARDWARE_SLOWDOWNS);
    }

    @Test
    void strideRuleOfR535AndLaterDrivers() {
        // _v3, ConfComputeMemSizeInfo, no RunningProcessDetailList: the R535 32-byte entries
        assertThat(ProcessStride.choose(true, true, true, true, false)).isEqualTo(ProcessStride.V3_32);
        assertThat(ProcessStride.choose(true, true, true, true, true)).isEqualTo(ProcessStride.V3_24);
        assertThat(ProcessStride.choose(true, true, true, false, false)).isEqualTo(ProcessStride.V3_24);
        assertThat(ProcessStride.choose(false, true, true, true, false)).isEqualTo(ProcessStride.V2_24);
        assertThat(ProcessStride.choose(false, false, true, false, false)).isEqualTo(ProcessStride.V1_16);
        assertThat(ProcessStride.choose(false, false, false, false, false)).isEqualTo(ProcessStride.NONE);
    }

    @Test
    void utilisationWindowSummary() {
        long[] ts = {3_000_000, 1_000_000, 2_000_000, 4_000_000};
        double[] r = {1.0, 0.05, 0.5, 0.0, 99};
        UtilizationWindow w = UtilizationSummary.summarise(ts, r, 4);
        assertThat(w).isEqualTo(new UtilizationWindow(4, 0.0, 1.55 / 4, 1.0, 0.5, 1.0, 4.0));
        assertThat(UtilizationSummary.summarise(ts, r, 0)).isNull();
    }

    @Test
    void libraryOptionWinsOverTheEnvironment() {
        Map<String, String> env = Map.of(GpuReaders.NVML_LIBRARY_ENV, " /opt/nv/libnvidia-ml.so.1 ");
        assertThat(GpuReaders.nvmlLibrary(Path.of("/x.so"), env)).contains(Path.of("/x.so"));
        assertThat(GpuReaders.nvmlLibrary(null, env)).contains(Path.of("/opt/nv/libnvidia-ml.so.1"));
        assertThat(GpuReaders.nvmlLibrary(null, Map.of())).isEmpty();
        assertThat(GpuReaders.nvmlLibrary(null, Map.of(GpuReaders.NVML_LIBRARY_ENV, ""))).isEmpty();
    }
}
