package dev.trainwatch.agent.k8s;

import java.util.Optional;
import java.util.function.LongFunction;

/** A process's pod from its {@code /proc/PID/cgroup} and the kubelet's directories. Not thread-safe. */
public final class KubernetesPods implements PodLookup {

    private final LongFunction<String> cgroupFile;
    private final KubeletLogs kubelet;

    /** {@code cgroupFile}: the contents of {@code /proc/PID/cgroup}, "" when unreadable. */
    public KubernetesPods(LongFunction<String> cgroupFile, KubeletLogs kubelet) {
        this.cgroupFile = cgroupFile;
        this.kubelet = kubelet;
    }

    @Override
    public Optional<PodIdentity> pod(long pid) {
        return PodCgroup.parse(cgroupFile.apply(pid)).flatMap(kubelet::identify);
    }
}
