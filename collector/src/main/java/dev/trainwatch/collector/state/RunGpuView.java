package dev.trainwatch.collector.state;

import java.util.List;

/**
 * One GPU of a run, in the run view. Null = not reported. Immutable.
 *
 * @param uuid                GPU UUID
 * @param host                node
 * @param index               NVML index on that node
 * @param name                NVML device name
 * @param ranks               ranks whose processes hold memory on it, when the agent knows them
 * @param memoryUsedBytes     now
 * @param memoryTotalBytes    capacity
 * @param peakMemoryBytes     highest since the GPU was attributed to this run
 * @param utilizationRatio    mean over the last minute
 * @param smClockRatio        mean SM clock / max SM clock over the last minute
 * @param lost                NVML reports the GPU lost
 */
public record RunGpuView(String uuid, String host, int index, String name, List<Integer> ranks,
                         Long memoryUsedBytes, Long memoryTotalBytes, Long peakMemoryBytes,
                         Double utilizationRatio, Double smClockRatio, boolean lost) {
}
