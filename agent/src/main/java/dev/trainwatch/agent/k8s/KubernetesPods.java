package dev.trainwatch.agent.k8s;

import java.util.Optional;
import java.util.function.LongFunction;

/**
 * Finds a process's pod: its pod UID and container id from {@code /proc/PID/cgroup}, their names from the
 * kubelet's directories. A process outside Kubernetes costs one read of its cgroup file. Not thread-safe.
 */
public final class KubernetesPods implements PodLookup {

    private final LongFunction<String> cgroupFile;
    private final KubeletLogs kubelet;

    /**
     * @param cgroupFile the contents of a process's {@code /proc/PID/cgroup} ("" when unreadable)
     * @param kubelet    the node's kubelet directories
     */
    public KubernetesPods(LongFunction<String> cgroupFile, KubeletLogs kubelet) {
        this.cgroupFile = cgroupFile;
        this.kubelet = kubelet;
    }

    @Override
    public Optional<PodIdentity> pod(long pid) {
        return PodCgroup.parse(cgroupFile.apply(pid)).flatMap(kubelet::identify);
    }
}
