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

    /**
     * The process {@code rootPid} and all its descendants in {@code table}, root first, then breadth-first. Empty
     * when the root is not in the table. Cycles (impossible in a consistent snapshot, possible in a torn one) are
     * cut.
     */
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

    /** Launcher programs whose children are the ranks of one job. */
    private static final Set<String> LAUNCHER_NAMES = Set.of("torchrun", "accelerate", "deepspeed", "mpirun",
            "mpiexec", "horovodrun", "srun", "colossalai");

    /** Python modules that launch ranks ({@code python -m MODULE}). */
    private static final List<String> LAUNCHER_MODULES = List.of("torch.distributed.run", "torch.distributed.launch",
            "accelerate.commands.launch", "deepspeed.launcher.runner", "deepspeed.launcher.launch");

    /**
     * Whether a process is a job launcher (torchrun, {@code python -m torch.distributed.run}, accelerate, deepspeed,
     * mpirun, srun): the common ancestor that groups the ranks of one job when their environment names no run.
     */
    public static boolean isLauncher(String comm, List<String> commandLine) {
        if (LAUNCHER_NAMES.contains(comm)) {
            return true;
        }
        int checked = 0;
        for (String arg : commandLine) {
            if (checked++ > 3) {
                break;
            }
            String base = arg.substring(arg.lastIndexOf('/') + 1);
            if (LAUNCHER_NAMES.contains(base) || LAUNCHER_MODULES.contains(arg)) {
                return true;
            }
        }
        return false;
    }
}
