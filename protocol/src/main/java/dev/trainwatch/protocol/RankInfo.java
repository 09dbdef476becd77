package dev.trainwatch.protocol;

import java.util.List;

/**
 * One process of a run and where it sits in the job, read from its environment.
 *
 * @param pid       host PID
 * @param rank      {@code RANK}
 * @param localRank {@code LOCAL_RANK}
 * @param worldSize {@code WORLD_SIZE}
 * @param gpuUuids  GPUs this process holds memory on
 * @param state             the process's state letter from {@code /proc/PID/stat}: {@code R} running, {@code S}
 *                          sleeping, {@code D} uninterruptible (I/O), {@code Z} zombie, {@code T} stopped
 * @param cpuSeconds        user + system CPU time of the process so far (its change between batches shows whether
 *                          it works or waits)
 * @param rssBytes          resident memory of the process
 * @param workers           child processes (its DataLoader workers)
 * @param workersRssBytes   resident memory of those children together
 * @param workersCpuSeconds CPU time of those children together
 */
public record RankInfo(long pid, Integer rank, Integer localRank, Integer worldSize, List<String> gpuUuids,
                       String state, Double cpuSeconds, Long rssBytes, Integer workers, Long workersRssBytes,
                       Double workersCpuSeconds) {

    /** A rank without process readings. */
    public RankInfo(long pid, Integer rank, Integer localRank, Integer worldSize, List<String> gpuUuids) {
        this(pid, rank, localRank, worldSize, gpuUuids, null, null, null, null, null, null);
    }
}
