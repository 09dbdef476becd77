package dev.trainwatch.agent.k8s;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.DoubleSupplier;

/**
 * Names pods and containers from what the kubelet already keeps on the node, without asking the API server:
 * <ul>
 *   <li>{@code /var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log}: one directory per pod, one per
 *       container below it;</li>
 *   <li>{@code /var/log/containers/<pod>_<namespace>_<container>-<container id>.log}: one link per container, which
 *       ties a runtime container id to its name.</li>
 * </ul>
 * Namespaces and pod names are DNS names, so {@code _} separates the parts unambiguously. The listing is read again
 * when a pod UID or container id is asked for that it does not have, at most every {@value #RELIST_SECONDS} s (a
 * pod that started since). Not thread-safe: one polling thread.
 */
public final class KubeletLogs {

    static final double RELIST_SECONDS = 10;

    private final Path pods;
    private final Path containers;
    private final DoubleSupplier clock;
    private Map<String, String[]> podsByUid = Map.of();          // uid → {namespace, pod}
    private Map<String, List<String>> containersByUid = Map.of(); // uid → container directory names
    private Map<String, String> containerNameById = Map.of();
    private double listedAt = Double.NEGATIVE_INFINITY;

    /** {@code nodeRoot}: {@code /}, or where the DaemonSet mounts the host's root; {@code clock} in seconds. */
    public KubeletLogs(Path nodeRoot, DoubleSupplier clock) {
        this.pods = nodeRoot.resolve("var/log/pods");
        this.containers = nodeRoot.resolve("var/log/containers");
        this.clock = clock;
    }

    public static KubeletLogs system() {
        return new KubeletLogs(Path.of("/"), () -> System.nanoTime() / 1e9);
    }

    /** Empty when the node has no such pod. */
    public Optional<PodIdentity> identify(PodCgroup cgroup) {
        String[] pod = podsByUid.get(cgroup.podUid());
        boolean containerUnknown = cgroup.containerId() != null && !containerNameById.containsKey(cgroup.containerId());
        if ((pod == null || containerUnknown) && clock.getAsDouble() - listedAt >= RELIST_SECONDS) {
            list();
            pod = podsByUid.get(cgroup.podUid());
        }
        if (pod == null) {
            return Optional.empty();
        }
        String container = cgroup.containerId() == null ? null : containerNameById.get(cgroup.containerId());
        if (container == null) {
            // A pod with a single container (the usual training pod) needs no id to name it.
            List<String> names = containersByUid.getOrDefault(cgroup.podUid(), List.of());
            container = names.size() == 1 ? names.get(0) : null;
        }
        return Optional.of(new PodIdentity(pod[0], pod[1], cgroup.podUid(), container));
    }

    private void list() {
        listedAt = clock.getAsDouble();
        Map<String, String[]> byUid = new HashMap<>();
        Map<String, List<String>> containerDirs = new HashMap<>();
        for (Path dir : entries(pods)) {
            String[] parts = dir.getFileName().toString().split("_");
            if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty() || parts[2].isEmpty()) {
                continue;
            }
            byUid.put(parts[2], new String[] {parts[0], parts[1]});
            containerDirs.put(parts[2], entries(dir).stream().filter(Files::isDirectory)
                    .map(c -> c.getFileName().toString()).toList());
        }
        Map<String, String> names = new HashMap<>();
        for (Path link : entries(containers)) {
            String file = link.getFileName().toString();
            if (!file.endsWith(".log")) {
                continue;
            }
            String stem = file.substring(0, file.length() - 4);
            String[] parts = stem.split("_");
            int dash = parts.length == 3 ? parts[2].lastIndexOf('-') : -1;
            if (dash <= 0) {
                continue;
            }
            names.put(parts[2].substring(dash + 1), parts[2].substring(0, dash));
        }
        podsByUid = byUid;
        containersByUid = containerDirs;
        containerNameById = names;
    }

    private static List<Path> entries(Path dir) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            stream.forEach(out::add);
        } catch (IOException | RuntimeException e) {
            // not a Kubernetes node, or not mounted: nothing to name
        }
        return out;
    }
}
