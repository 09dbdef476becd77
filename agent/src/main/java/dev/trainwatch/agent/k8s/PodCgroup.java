package dev.trainwatch.agent.k8s;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kubernetes pod and container a process runs in, as its {@code /proc/PID/cgroup} names them. Pure.
 *
 * <p>The kubelet puts every pod in a cgroup named after the pod's UID and the runtime puts each container below it,
 * named after the container's id. The layouts seen on real nodes:
 * <ul>
 *   <li>cgroupfs driver (v1 or v2): {@code /kubepods/besteffort/pod<uid>/<container id>}, with {@code crio-} before
 *       the id under CRI-O;</li>
 *   <li>systemd driver: {@code /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice/
 *       cri-containerd-<id>.scope} ({@code crio-<id>.scope} under CRI-O, {@code docker-<id>.scope} under Docker);</li>
 *   <li>containerd's own systemd form: {@code /system.slice/containerd.service/kubepods-besteffort-pod<uid>.slice
 *       :cri-containerd:<id>}.</li>
 * </ul>
 * A pod UID is a UUID (dashes, or underscores in systemd slice names), or 32 hex digits for static pods, whose UID is a
 * hash of their manifest. {@code podUid} has dashes, as the kubelet's directory names; {@code containerId} (64 hex
 * digits) is null when the cgroup names only the pod.
 */
public record PodCgroup(String podUid, String containerId) {

    /** Compiled on first use. */
    private static final class Patterns {
        static final Pattern POD = Pattern.compile(
                "pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})(?![0-9a-f])");
        static final Pattern CONTAINER = Pattern.compile(
                "(?:^|[/:-])(?:cri-containerd[-:]|crio-|docker-|containerd-)?([0-9a-f]{64})(?:\\.scope)?(?:$|/)");
    }

    /** The pod of the deepest cgroup path that names one; empty outside Kubernetes. */
    public static Optional<PodCgroup> parse(String cgroupFile) {
        if (cgroupFile == null || cgroupFile.isEmpty()) {
            return Optional.empty();
        }
        PodCgroup best = null;
        for (String rawLine : cgroupFile.split("\n")) {
            String line = rawLine.strip();
            // hierarchy-ID:controllers:path; the path may itself contain ':' (containerd's systemd form)
            int first = line.indexOf(':');
            int second = first < 0 ? -1 : line.indexOf(':', first + 1);
            if (second < 0) {
                continue;
            }
            String path = line.substring(second + 1);
            if (!path.contains("pod")) {
                continue; // POD needs the word: a host's or a plain container's cgroup compiles no pattern
            }
            Matcher pod = Patterns.POD.matcher(path);
            String uid = null;
            int podEnd = -1;
            while (pod.find()) {
                uid = pod.group(1);
                podEnd = pod.end();
            }
            if (uid == null) {
                continue;
            }
            Matcher container = Patterns.CONTAINER.matcher(path);
            String id = container.find(podEnd) ? container.group(1) : null;
            PodCgroup found = new PodCgroup(uid.replace('_', '-'), id); // systemd slices write '_' for '-'
            if (best == null || best.containerId() == null && id != null) {
                best = found;
            }
        }
        return Optional.ofNullable(best);
    }

}
