package dev.trainwatch.protocol;

import java.util.List;

/**
 * Which GPUs of this node belong to which run, as the agent found out.
 *
 * @param runId      run id: {@code --run-id}, else {@code TORCHELASTIC_RUN_ID}, {@code SLURM_JOB_ID}, else derived
 *                   from the root PID
 * @param pids       the run's processes on this node
 * @param gpuUuids   the GPUs they use
 * @param ranks      per-process rank information, where the environment tells it
 * @param masterAddr {@code MASTER_ADDR}, when set (groups a multi-node run)
 * @param ended      true once every process of the run on this node has exited
 */
public record RunAttribution(String runId, List<Long> pids, List<String> gpuUuids, List<RankInfo> ranks,
                             String masterAddr, Boolean ended) {
}
