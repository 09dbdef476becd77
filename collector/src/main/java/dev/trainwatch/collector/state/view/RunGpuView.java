package dev.trainwatch.collector.state.view;

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
 * @param powerWatts          power draw now
 * @param process             the process of the (first) rank on it, when the agent reads ranks' processes
 * @param smActiveRatio       share of SMs at work, mean over the last minute (GPM; null without the counters)
 * @param tensorActiveRatio   share of time the tensor pipes were busy, likewise
 * @param dramActiveRatio     DRAM bandwidth used against the maximum, likewise
 * @param nvlinkBytesPerSecond NVLink traffic received plus sent, mean over the last minute (null without NVLink)
 */
public record RunGpuView(String uuid, String host, int index, String name, List<Integer> ranks,
                         Long memoryUsedBytes, Long memoryTotalBytes, Long peakMemoryBytes,
                         Double utilizationRatio, Double smClockRatio, boolean lost, Double powerWatts,
                         Process process, Double smActiveRatio, Double tensorActiveRatio, Double dramActiveRatio,
                         Double nvlinkBytesPerSecond) {

    /** A GPU without hardware activity counters. */
    public RunGpuView(String uuid, String host, int index, String name, List<Integer> ranks, Long memoryUsedBytes,
                      Long memoryTotalBytes, Long peakMemoryBytes, Double utilizationRatio, Double smClockRatio,
                      boolean lost, Double powerWatts, Process process) {
        this(uuid, host, index, name, ranks, memoryUsedBytes, memoryTotalBytes, peakMemoryBytes, utilizationRatio,
                smClockRatio, lost, powerWatts, process, null, null, null, null);
    }

    /**
     * A rank's process: {@code state} ({@code R} running, {@code S} sleeping, {@code D} in I/O, {@code Z} zombie),
     * {@code cpuRatio} (cores busy over the last 30 s), resident memory, its DataLoader workers and theirs.
     */
    public record Process(int rank, long pid, String state, Double cpuRatio, Long rssBytes, Integer workers,
                          Long workersRssBytes) {
    }
}
