package dev.trainwatch.collector.detect;

import java.util.Collection;
import java.util.List;

/**
 * One GPU's rolling window, oldest entry first (index 0). Readings a GPU does not support are {@code NaN}.
 * Entries closer together than the window's resolution are merged (max memory, mean utilisation, min of the
 * minimum), so the window spans its full duration whatever the polling interval. Read it only inside a
 * {@link RunContext} evaluation: it is not safe to keep.
 */
public interface GpuSeries extends TimeOrdered {

    /** Clock-event reasons as metric label values; bit i of {@link #clockEventMask} is reason i. */
    List<String> CLOCK_EVENT_REASONS = List.of("gpu_idle", "applications_clocks_setting", "sw_power_cap",
            "hw_slowdown", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
            "display_clock_setting");

    /** The mask of the given reason names (unknown names are ignored). */
    static int reasonMask(Collection<String> reasons) {
        int mask = 0;
        for (String r : reasons) {
            int bit = r == null ? -1 : CLOCK_EVENT_REASONS.indexOf(r); // List.of(...).indexOf(null) would throw
            if (bit >= 0) {
                mask |= 1 << bit;
            }
        }
        return mask;
    }

    String uuid();

    String host();

    int index();

    /** NVML device name, null when unknown. */
    String name();

    /** Device memory in bytes, NaN when unknown. */
    double memoryTotalBytes();

    /** True when NVML reported the GPU lost in its newest sample. */
    boolean lost();

    double memoryUsedBytes(int i);

    /**
     * The first entry from which every entry's memory in use is the newest entry's value ({@link #size()} when the
     * newest is NaN or there is none): memory that held still over a window has no trend to fit. May answer a later
     * entry than the first of the run (never an earlier one); this default scans back, the fleet's windows keep it.
     */
    default int memoryStillFrom() {
        return memoryStillFrom(this);
    }

    /** {@link #memoryStillFrom()} by scanning back from the newest entry. */
    static int memoryStillFrom(GpuSeries g) {
        int n = g.size();
        if (n == 0 || Double.isNaN(g.memoryUsedBytes(n - 1))) {
            return n;
        }
        double newest = g.memoryUsedBytes(n - 1);
        int i = n - 1;
        while (i > 0 && g.memoryUsedBytes(i - 1) == newest) {
            i--;
        }
        return i;
    }

    double utilizationRatio(int i);

    /** Lowest buffered utilisation sample in the entry. */
    double utilizationMinRatio(int i);

    /** Share of buffered samples at or below 5%. */
    double idleFraction(int i);

    double smClockHz(int i);

    double smClockMaxHz(int i);

    double powerWatts(int i);

    double temperatureCelsius(int i);

    /** Clock-event reasons active in entry {@code i}, as a mask over {@link #CLOCK_EVENT_REASONS}. */
    int clockEventMask(int i);

    /** Share of SMs busy over the entry (GPM), NaN where the GPU has no activity counters. */
    default double smActiveRatio(int i) {
        return Double.NaN;
    }

    /** Share of time any tensor pipe was busy over the entry (GPM), NaN without counters. */
    default double tensorActiveRatio(int i) {
        return Double.NaN;
    }

    /** DRAM bandwidth used against the maximum over the entry (GPM), NaN without counters. */
    default double dramActiveRatio(int i) {
        return Double.NaN;
    }

    /** NVLink data received plus sent, bytes per second since the previous poll; NaN without NVLink counters. */
    default double nvlinkBytesPerSecond(int i) {
        return Double.NaN;
    }

    /** PCIe traffic into the GPU (host to device), bytes per second over the entry; NaN without the counter. */
    default double pcieRxBytesPerSecond(int i) {
        return Double.NaN;
    }

    /** Compute processes NVML last listed on this GPU that are not its run's, largest first. */
    default List<OtherProcess> otherProcesses() {
        return List.of();
    }

    /**
     * A process on the GPU that is not one of its run's.
     *
     * @param usedBytes device memory it holds (NVML), NaN when NVML cannot tell
     * @param sinceTs   when it was first listed on this GPU (collector clock)
     * @param runId     the watched run it belongs to, null when it belongs to none
     */
    record OtherProcess(long pid, double usedBytes, double sinceTs, String runId) {
    }

}
