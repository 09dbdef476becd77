package dev.trainwatch.agent.attribution;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Pure functions over a snapshot of the process table. */
public final class ProcessTree {

    private ProcessTree() {
    }

    /** Root first, then breadth-first; empty without the root. Cycles (a torn snapshot) are cut. */
    public static Set<Long> descendants(long rootPid, Collection<ProcStat> table) {
        Map<Long, List<Long>> children = new HashMap<>();
        boolean rootPresent = false;
        for (ProcStat stat : table) {
            children.computeIfAbsent(stat.ppid(), k -> new ArrayList<>()).add(stat.pid());
            rootPresent |= stat.pid() == rootPid;
        }
        Set<Long> result = new LinkedHashSet<>();
        if (!rootPresent) {
            return result;
        }
        Deque<Long> queue = new ArrayDeque<>();
        queue.add(rootPid);
        while (!queue.isEmpty()) {
            long pid = queue.removeFirst();
            if (result.add(pid)) {
                queue.addAll(children.getOrDefault(pid, List.of()));
            }
        }
        return result;
    }

    private static final Set<String> LAUNCHER_NAMES = Set.of("torchrun", "accelerate", "deepspeed", "mpirun",
            "mpiexec", "horovodrun", "srun", "colossalai");

    private static final List<String> LAUNCHER_MODULES = List.of("torch.distributed.run", "torch.distributed.launch",
            "accelerate.commands.launch", "deepspeed.launcher.runner", "deepspeed.launcher.launch");

    /** The common ancestor that groups one job's ranks when their environment names no run. */
    public static boolean isLauncher(String comm, List<String> commandLine) {
        return LAUNCHER_NAMES.contains(comm) || commandLine.stream().limit(4).anyMatch(arg ->
                LAUNCHER_NAMES.contains(arg.substring(arg.lastIndexOf('/') + 1)) || LAUNCHER_MODULES.contains(arg));
    }
}
