package dev.trainwatch.agent.attribution;

import java.util.Map;

/** How a run is named. Pure. */
public final class RunIds {

    private RunIds() {
    }

    /**
     * The run id a process's environment names: {@code TORCHELASTIC_RUN_ID}, else {@code SLURM_JOB_ID}, else null.
     * torchrun's default rendezvous id "none" names nothing (every job without {@code --rdzv-id} carries it).
     */
    public static String fromEnvironment(Map<String, String> env) {
        String elastic = ProcessEnvironment.stringValue(env, ProcessEnvironment.TORCHELASTIC_RUN_ID);
        if (elastic != null && !elastic.equalsIgnoreCase("none")) {
            return elastic;
        }
        String slurm = ProcessEnvironment.stringValue(env, ProcessEnvironment.SLURM_JOB_ID);
        return slurm;
    }

    /**
     * A run id derived from the root process when nothing names the run: host, pid and start time, so a reused pid
     * (or the same pid on another node) is another run.
     */
    public static String derived(String host, ProcStat root) {
        return host + "-" + root.pid() + "-" + root.startTimeTicks();
    }
}
