package dev.trainwatch.collector.detect;

import java.util.Collection;
import java.util.List;
import java.util.stream.IntStream;

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
        for (String r : reasons) { // a loop, not a stream: read for every GPU sample the collector takes
            int bit = r == null ? -1 : CLOCK_EVENT_REASONS.indexOf(r); // List.of(...).indexOf(null) would throw
            if (bit >= 0) {
                mask |= 1 << bit;
            }
        }
        return mask;
    }

    /** The reason names of {@code mask}, in {@link #CLOCK_EVENT_REASONS} order. */
    static List<String> reasonNames(int mask) {
        return IntStream.range(0, CLOCK_EVENT_REASONS.size()).filter(bit -> (mask & (1 << bit)) != 0)
                .mapToObj(CLOCK_EVENT_REASONS::get).toList();
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
     * entry than the first of the run (never an earlier one): the fleet's windows keep it rather than scan back.
     */
    int memoryStillFrom();

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

    /** Reading {@code r} of entry {@code i}, NaN where the GPU does not report it. */
    double reading(Reading r, int i);

    /** SM clock against its maximum in entry {@code i}, at most 1; NaN when either is unknown. */
    default double clockRatio(int i) {
        double max = reading(Reading.SM_CLOCK_MAX_HZ, i);
        return max > 0 ? Math.min(1.0, reading(Reading.SM_CLOCK_HZ, i) / max) : Double.NaN;
    }

    /** Clock-event reasons active in entry {@code i}, as a mask over {@link #CLOCK_EVENT_REASONS}. */
    int clockEventMask(int i);

    /** Compute processes NVML last listed on this GPU that are not its run's, largest first. */
    List<OtherProcess> otherProcesses();

    /** The per-entry readings kept as floats; the activity ones (GPM, NVLink, PCIe) are NaN without counters. */
    enum Reading {
        UTILIZATION,
        /** Lowest buffered utilisation sample in the entry. */
        UTILIZATION_MIN,
        /** Share of buffered samples at or below 5%. */
        IDLE_FRACTION,
        SM_CLOCK_HZ,
        SM_CLOCK_MAX_HZ,
        POWER_WATTS,
        TEMPERATURE_C,
        /** Share of SMs busy over the entry (GPM). */
        SM_ACTIVE,
        /** Share of time any tensor pipe was busy over the entry (GPM). */
        TENSOR_ACTIVE,
        /** DRAM bandwidth used against the maximum over the entry (GPM). */
        DRAM_ACTIVE,
        /** NVLink data received plus sent, bytes per second since the previous poll. */
        NVLINK_BYTES_PER_S,
        /** PCIe traffic into the GPU (host to device), bytes per second over the entry. */
        PCIE_RX_BYTES_PER_S
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
