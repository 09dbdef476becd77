package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Evidence of {@code stalled} from the phases the log announced ({@code checkpoint}, {@code checkpoint_saved},
 * {@code evaluation}, {@code caching}, {@code quantizing}): a phase is not a hang while it lasts less than its limit.
 * Before the first step, a start-up phase (caching latents or text-encoder outputs, quantizing the base) can run for
 * hours and the agent announces it once however long its bar runs, so it counts as running while the run's processes
 * (without process readings, its GPUs) work, up to its limit; once its last line is followed by silence while nothing
 * works, it has ended, and a run still at step 0 a stall window later is stuck.
 */
final class StallPhase {

    private final DetectorSettings.Stalled.Phases s;

    StallPhase(DetectorSettings.Stalled.Phases settings) {
        this.s = settings;
    }

    static boolean startUp(String kind) {
        return "caching".equals(kind) || "quantizing".equals(kind) || "loading".equals(kind);
    }

    /**
     * No step and no rank's report yet, and a phase announced: while the phase runs its GPUs' idleness is its own,
     * and once it ended {@link #atStepZero} says the run is stuck at step 0, so the GPU detectors hold.
     */
    static boolean beforeFirstStep(RunContext run) {
        return run.steps().size() == 0 && run.announcedPhase() != null
                && StallReports.newestTs(run.ranks()) == Double.NEGATIVE_INFINITY;
    }

    double limitSeconds(String kind) {
        return (startUp(kind) ? s.startUpLimit() : kind.startsWith("checkpoint") ? s.checkpointLimit()
                : s.evaluationLimit()).toMillis() / 1000.0;
    }

    static String name(String kind) {
        return kind.startsWith("checkpoint") ? "checkpoint" : kind;
    }

    String[] overrun(String kind) {
        String what = kind.startsWith("checkpoint") ? "a checkpoint save" : startUp(kind) ? "a " + kind + " phase"
                : "an evaluation";
        String message = "; the log announced " + what + " that has lasted longer than "
                + Math.round(limitSeconds(kind) / 60) + " minutes";
        String suggestion = kind.startsWith("checkpoint")
                ? "a checkpoint save this long is stuck: check the checkpoint directory's disk (df, a full or hung "
                        + "network file system) and dump the saving rank's stack (py-spy dump --pid PID)"
                : "an evaluation this long is stuck or far too large: dump the stacks (py-spy dump --pid PID), "
                        + "and evaluate on fewer samples or less often";
        if (startUp(kind)) {
            suggestion = what + " this long is stuck: dump the stacks (py-spy dump --pid PID) and check that its "
                    + "progress bar still moves in the log";
        }
        return new String[] {message, suggestion};
    }

    /**
     * A run with no step yet whose log announced a phase: stuck at step 0 once the phase's newest line is followed by
     * {@code windowSeconds} of silence while nothing works, or by the phase's limit while something does.
     */
    Optional<Finding> atStepZero(RunContext run, double windowSeconds, List<RankProcess> procs,
            Map<String, StallGpus.State> gpus, StallProcesses processes) {
        String kind = run.announcedPhase();
        double phaseTs = run.announcedPhaseTs();
        if (kind == null || Double.isNaN(phaseTs) || run.now() < run.stepsLateUntil()) {
            return Optional.empty();
        }
        double since = run.now() - phaseTs;
        boolean works = procs.isEmpty() ? gpus.isEmpty() || gpus.values().stream().anyMatch(g -> !g.idle())
                : procs.stream().anyMatch(processes::works);
        double allowance = works ? Math.max(windowSeconds, limitSeconds(kind)) : windowSeconds;
        if (!(since >= allowance)) {
            return Optional.empty();
        }
        double busy = StallGpus.meanUtilization(gpus.values());
        String gpusNow = Double.isNaN(busy) ? "" : busy < 0.05 ? "; the GPUs are idle"
                : String.format(Locale.ROOT, "; the GPUs are %s busy", Texts.pct(busy));
        String message = works
                ? String.format(Locale.ROOT, "stuck at step 0: no step and no phase line for %s since its %s phase "
                        + "was announced, longer than that phase is given (%d minutes), though its processes still "
                        + "work%s", Texts.secs(since), name(kind), Math.round(limitSeconds(kind) / 60), gpusNow)
                : String.format(Locale.ROOT, "stuck at step 0 after its %s phase ended: no step and no phase line for "
                        + "%s, and %s%s", name(kind), Texts.secs(since), procs.isEmpty() ? "nothing works"
                        : "its processes are idle", gpusNow);
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("ranks", List.of());
        evidence.put("hosts", new ArrayList<>(StalledDetector.gpuHosts(run)));
        evidence.put("last_step", 0L);
        evidence.put("announced_phase", kind);
        evidence.put("announced_phase_ts", phaseTs);
        evidence.put("seconds_since_phase", Math.round(since));
        evidence.put("threshold_seconds", Math.round(allowance));
        evidence.put("processes_working", works);
        if (!Double.isNaN(busy)) {
            evidence.put("gpu_utilization_ratio", Texts.round(busy, 3));
        }
        String suggestion = "the run finished its " + name(kind) + " phase but never reached its first step: dump "
                + "its stack (" + StalledDetector.PY_SPY_PLACEHOLDER + ") to see where it waits (a DataLoader worker, "
                + "a collective at start-up, a download or a lock) and look for an error the trainer printed without "
                + "exiting";
        return Optional.of(new Finding(since >= 2 * allowance ? Severity.CRITICAL : Severity.WARNING, message,
                evidence, suggestion.replace(StalledDetector.PY_SPY_PLACEHOLDER,
                        StalledDetector.pySpy(run.rankProcesses(), Set.of()))));
    }
}
