package dev.trainwatch.collector.detect;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Evidence of {@code stalled} from the ranks' processes as the agents read them from {@code /proc}: a process that
 * sleeps without using the CPU (or is a zombie, or stopped) while the others spin (NCCL's progress loop keeps them on
 * the CPU) is the rank they wait for. A rank in uninterruptible I/O is usually writing a checkpoint or reading data:
 * if that never ends, the usual threshold says so.
 */
final class StallProcesses {

    private final DetectorSettings.Stalled.Processes s;

    StallProcesses(DetectorSettings.Stalled.Processes settings) {
        this.s = settings;
    }

    /** The readings that say something about now: an agent that stopped sending them says nothing. */
    List<RankProcess> fresh(RunContext run) {
        double maxAge = s.maxAge().toMillis() / 1000.0;
        return run.rankProcesses().stream().filter(p -> run.now() - p.ts() <= maxAge).toList();
    }

    /** Whether the process works right now: running, in I/O, or not asleep on the CPU (a download, a load). */
    boolean works(RankProcess p) {
        return "R".equals(p.state()) || "D".equals(p.state()) || p.cpuRate() >= s.asleepCpu();
    }

    /** Whether a rank whose GPU is idle is busy on its CPU instead (a save or evaluation the log did not announce). */
    boolean busyOnCpu(RankProcess p) {
        return "R".equals(p.state()) || p.cpuRate() >= s.busyCpu();
    }

    void culprits(List<RankProcess> procs, Map<Integer, StallCulprit> out) {
        long spinning = procs.stream().filter(p -> p.cpuRate() >= s.spinningCpu()).count();
        for (RankProcess p : procs) {
            boolean deadOrStopped = "Z".equals(p.state()) || "T".equals(p.state()) || "X".equals(p.state());
            boolean asleep = p.cpuRate() < s.asleepCpu() && !"R".equals(p.state()) && !"D".equals(p.state());
            if (deadOrStopped || asleep && spinning * 2 >= procs.size() && procs.size() >= 2) {
                out.putIfAbsent(p.rank(), new StallCulprit(p.rank(), p.host(), String.format(Locale.ROOT,
                        "its process (pid %d) is %s and used %s of a core in the last 30 s while %d of %d ranks spin",
                        p.pid(), stateName(p.state()), Texts.pct(Double.isNaN(p.cpuRate()) ? 0 : p.cpuRate()),
                        spinning, procs.size()), false));
            }
        }
    }

    private static String stateName(String state) {
        return state == null ? "" : switch (state) {
            case "Z" -> "a zombie (it exited, its parent has not reaped it)";
            case "T" -> "stopped (a debugger or SIGSTOP)";
            case "D" -> "in uninterruptible I/O";
            case "S" -> "asleep";
            default -> "in state " + state;
        };
    }
}
