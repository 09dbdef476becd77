package dev.trainwatch.agent.k8s;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names the multi-node job a pod's process belongs to, so that the ranks of every node of one Kubeflow PyTorchJob,
 * TrainJob or JobSet report one run. Pure.
 *
 * <p>What the operators put in the pod, by which the job is known:
 * <ul>
 *   <li>{@code JOBSET_NAME}, when the pod spec passes it (JobSet's label through the downward API, as XPK does);</li>
 *   <li>Kubeflow's training operator (PyTorchJob): {@code MASTER_ADDR} and {@code PET_MASTER_ADDR} are the master
 *       replica's name, {@code <job>-master-0}, and pods are named {@code <job>-master-0}, {@code <job>-worker-N};</li>
 *   <li>Kubeflow Trainer (TrainJob on a JobSet): {@code PET_MASTER_ADDR} is the first node's host name,
 *       {@code <job>-node-0-0.<job>}, the JobSet host-name scheme {@code <jobset>-<replicated job>-<job index>-<pod
 *       index>.<subdomain>} whose subdomain is the JobSet's name.</li>
 * </ul>
 * Only a process that runs in a pod is named this way: a Slurm node called {@code gpu-worker-3} is not a job.
 */
public final class KubernetesJob {

    private static final String JOBSET_NAME = "JOBSET_NAME";
    private static final String PET_MASTER_ADDR = "PET_MASTER_ADDR";
    private static final String MASTER_ADDR = "MASTER_ADDR";

    private static final String DNS_LABEL = "[a-z0-9](?:[-a-z0-9]*[a-z0-9])?";

    /** Compiled on first use. */
    private static final class Patterns {
        static final Pattern PYTORCHJOB_REPLICA = Pattern.compile("(" + DNS_LABEL + ")-(?:master|worker)-\\d+");
        static final Pattern JOBSET_HOST = Pattern.compile(
                "(" + DNS_LABEL + ")-" + DNS_LABEL + "-\\d+-\\d+\\.\\1(?:\\..*)?");
        static final Pattern NAME = Pattern.compile(DNS_LABEL + "(?:\\." + DNS_LABEL + ")*");
    }

    private KubernetesJob() {
    }

    /** The job's name, or null when the process is not in a pod or nothing names a job. */
    public static String jobName(Map<String, String> env, PodIdentity pod) {
        if (pod == null) {
            return null;
        }
        String jobset = env.get(JOBSET_NAME);
        if (jobset != null && jobset.length() <= 63 && Patterns.NAME.matcher(jobset).matches()) {
            return jobset;
        }
        for (String key : List.of(PET_MASTER_ADDR, MASTER_ADDR)) {
            String addr = env.get(key);
            if (addr == null) {
                continue;
            }
            Matcher replica = Patterns.PYTORCHJOB_REPLICA.matcher(addr);
            if (replica.matches()) {
                return replica.group(1);
            }
            Matcher host = Patterns.JOBSET_HOST.matcher(addr);
            if (host.matches()) {
                return host.group(1);
            }
        }
        // The master of an older training operator is told MASTER_ADDR=localhost: its own name says the job.
        Matcher own = Patterns.PYTORCHJOB_REPLICA.matcher(pod.pod());
        return own.matches() ? own.group(1) : null;
    }

    /** The job's run id, the same on every node: {@code <job>.<namespace>}, or null when there is no job. */
    public static String runId(Map<String, String> env, PodIdentity pod) {
        String job = jobName(env, pod);
        if (job == null) {
            return null;
        }
        return pod.namespace() == null ? job : job + "." + pod.namespace();
    }
}
