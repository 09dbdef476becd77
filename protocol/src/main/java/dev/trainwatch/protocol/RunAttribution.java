package dev.trainwatch.protocol;

import java.util.List;

/**
 * Which GPUs of this node belong to which run, as the agent found out.
 *
 * @param runId      run id: {@code --run-id}, else {@code TORCHELASTIC_RUN_ID}, {@code SLURM_JOB_ID}, else derived
 *                   from the root PID
 * @param ranks      per-process rank information, where the environment tells it
 * @param masterAddr {@code MASTER_ADDR}, when set (groups a multi-node run)
 * @param ended      true once every process of the run on this node has exited
 * @param aliases    other names the run goes by on this node, so a spec registered under one of them finds it: the
 *                   values of {@code SLURM_JOB_ID} and {@code TORCHELASTIC_RUN_ID} in its processes' environment and
 *                   {@code host:pid} of its root process (null or empty when none)
 * @param namespace  Kubernetes: the namespace of the run's pod on this node (null elsewhere)
 * @param pod        Kubernetes: the name of the run's pod on this node
 * @param container  Kubernetes: the name of the container the run's processes run in, when the node says
 * @param job        Kubernetes: the multi-node job (PyTorchJob, TrainJob, JobSet) the pod belongs to
 */
public record RunAttribution(String runId, List<Long> pids, List<String> gpuUuids, List<RankInfo> ranks,
                             String masterAddr, Boolean ended, List<String> aliases, String namespace, String pod,
                             String container, String job) {

    /** The same attribution with other aliases (the collector leaves out those it cannot take). */
    public RunAttribution withAliases(List<String> newAliases) {
        return new RunAttribution(runId, pids, gpuUuids, ranks, masterAddr, ended, newAliases, namespace, pod,
                container, job);
    }
}
