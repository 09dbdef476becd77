package dev.trainwatch.collector.detect;

/**
 * One GPU's rolling window, oldest entry first (index 0). Readings a GPU does not support are {@code NaN}.
 * Entries closer together than the window's resolution are merged (max memory, mean utilisation, min of the
 * minimum), so the window spans its full duration whatever the polling interval. Read it only inside a
 * {@link RunContext} evaluation: it is not safe to keep.
 */
public interface GpuSeries {

    String uuid();

    String host();

    int index();

    /** NVML device name, null when unknown. */
    String name();

    /** Device memory in bytes, NaN when unknown. */
    double memoryTotalBytes();

    /** True when NVML reported the GPU lost in its newest sample. */
    boolean lost();

    int size();

    /** Unix seconds of entry {@code i}. */
    double ts(int i);

    double memoryUsedBytes(int i);

    double utilizationRatio(int i);

    /** Lowest buffered utilisation sample in the entry. */
    double utilizationMinRatio(int i);

    /** Share of buffered samples at or below 5%. */
    double idleFraction(int i);

    double smClockHz(int i);

    double smClockMaxHz(int i);

    double powerWatts(int i);

    double temperatureCelsius(int i);

    /** Whether clock-event reason {@code reason} (a metric label value, e.g. {@code sw_power_cap}) was active. */
    boolean clockEvent(int i, String reason);

    /** Index of the first entry with {@code ts >= fromTs} ({@code size()} when none). */
    default int firstIndexAtOrAfter(double fromTs) {
        int lo = 0;
        int hi = size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ts(mid) < fromTs) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
