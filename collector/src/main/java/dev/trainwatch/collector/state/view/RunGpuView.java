package dev.trainwatch.collector.state.view;

import java.util.List;

/** One GPU of a run, in the run view (fields: docs/API.md); null = not reported. */
public record RunGpuView(String uuid, String host, int index, String name, List<Integer> ranks,
                         Long memoryUsedBytes, Long memoryTotalBytes, Long peakMemoryBytes,
                         Double utilizationRatio, Double smClockRatio, boolean lost, Double powerWatts,
                         Process process, Double smActiveRatio, Double tensorActiveRatio, Double dramActiveRatio,
                         Double nvlinkBytesPerSecond) {

    /**
     * A rank's process: {@code state} ({@code R} running, {@code S} sleeping, {@code D} in I/O, {@code Z} zombie),
     * {@code cpuRatio} (cores busy over the last 30 s), resident memory, its DataLoader workers and theirs.
     */
    public record Process(int rank, long pid, String state, Double cpuRatio, Long rssBytes, Integer workers,
                          Long workersRssBytes) {
    }
}
