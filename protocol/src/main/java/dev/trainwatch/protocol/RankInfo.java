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
 */
public record RankInfo(long pid, Integer rank, Integer localRank, Integer worldSize, List<String> gpuUuids) {
}
