package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * {@code stalled}: no progress. The run's step reports stop for many expected report gaps: warning at the threshold,
 * critical at twice it; resolved by the next step. The rank that stopped is named from its own reports
 * ({@link StallReports}), its process ({@link StallProcesses}) or its GPU ({@link StallGpus}); once one is, the hang is
 * called one report gap plus a grace after the last report. A phase the log announced ({@link StallPhase}) is given
 * its limit, and before the first step a run is stuck only once its phases ended.
 */
public final class StalledDetector extends BaseDetector {

    static final String PY_SPY_PLACEHOLDER = "py-spy dump --pid PID";

    private final DetectorSettings.Stalled s;
    private final StallReports reports;
    private final StallProcesses processes;
    private final StallGpus gpus;
    private final StallPhase phases;

    public StalledDetector(DetectorSettings settings) {
        super(AnomalyKind.STALLED);
        this.s = settings.stalled();
        this.reports = new StallReports(s.reports());
        this.processes = new StallProcesses(s.processes());
        this.gpus = new StallGpus(s.gpus());
        this.phases = new StallPhase(s.phases());
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        StepSeries steps = run.steps();
        int n = steps.size();
        // Progress is any rank's report: when the lead rank's reports stop while the others go on, the run moves.
        double lastTs = Math.max(n > 0 ? steps.ts(n - 1) : Double.NEGATIVE_INFINITY, StallReports.newestTs(run.ranks()));
        if (n == 0) {
            return !StallPhase.beforeFirstStep(run) ? Optional.empty()
                    : phases.atStepZero(run, seconds(s.minSilence()), processes.fresh(run),
                            gpus.states(run, run.now()), processes);
        }
        double silence = run.now() - lastTs;
        if (run.now() < run.stepsLateUntil()) {
            return Optional.empty(); // an agent is still delivering the run's backlog: its newest steps are on their way
        }
        double gap = steps.expectedReportGapSeconds();
        double threshold = Math.max(seconds(s.minSilence()), s.reportGapMultiple() * gap);
        String phase = run.announcedPhase();
        if (phase != null) {
            threshold = Math.max(threshold, phases.limitSeconds(phase));
        }
        double hangAfter = Math.max(seconds(s.hangMinSilence()), gap + seconds(s.hangGrace()));
        if (!(silence >= Math.min(threshold, hangAfter))) {
            return Optional.empty();
        }
        List<RankProcess> procs = run.rankProcesses();
        Map<String, StallGpus.State> gpuStates = gpus.states(run, lastTs);
        List<StallCulprit> culprits = culprits(run, procs, gpuStates, gap);
        int rankCount = Math.max(procs.size(), run.ranks().count());
        boolean named = !culprits.isEmpty() && culprits.stream().noneMatch(StallCulprit::busyOnCpu)
                && (rankCount == 0 || culprits.size() * 2 < Math.max(2, rankCount)
                        || StallCulprit.oneOfTwo(culprits.size(), rankCount));
        if (silence < threshold && (!named || phase != null)) {
            return Optional.empty(); // past the quick mark, but nobody to name: wait for the usual threshold
        }
        TreeSet<Integer> ranks = new TreeSet<>();
        TreeSet<String> hosts = new TreeSet<>();
        for (StallCulprit c : culprits) {
            ranks.add(c.rank());
            if (c.host() != null) {
                hosts.add(c.host());
            }
        }
        if (culprits.isEmpty()) {
            hosts.addAll(gpuHosts(run));
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("ranks", List.copyOf(ranks));
        evidence.put("hosts", List.copyOf(hosts));
        evidence.put("last_step", steps.step(n - 1));
        evidence.put("last_step_ts", lastTs);
        evidence.put("seconds_since_last_step", Math.round(silence));
        evidence.put("expected_report_gap_seconds", Texts.round(gap, 2));
        evidence.put("threshold_seconds", Math.round(named ? Math.min(threshold, hangAfter) : threshold));
        if (phase != null) {
            evidence.put("announced_phase", phase);
            evidence.put("announced_phase_ts", run.announcedPhaseTs());
        }
        String[] text = describe(run, phase, named, culprits, ranks, hosts, gpuStates, evidence);
        String message = String.format(Locale.ROOT, "no step since step %d, %s ago (a report is expected every %s)",
                steps.step(n - 1), Texts.secs(silence), Texts.secs(gap)) + text[0];
        return Optional.of(new Finding(silence >= 2 * threshold ? Severity.CRITICAL : Severity.WARNING, message,
                evidence, text[1].replace(PY_SPY_PLACEHOLDER, pySpy(procs, ranks))));
    }

    /** Ranks that stopped first, from their own reports, their processes and their GPUs. */
    private List<StallCulprit> culprits(RunContext run, List<RankProcess> procs, Map<String, StallGpus.State> states,
            double gap) {
        Map<Integer, String> hostOfRank = new LinkedHashMap<>();
        for (RankProcess p : procs) {
            hostOfRank.put(p.rank(), p.host());
        }
        for (Map.Entry<Integer, String> e : run.gpuOfRank().entrySet()) {
            StallGpus.State g = states.get(e.getValue());
            if (g != null && g.host() != null) {
                hostOfRank.putIfAbsent(e.getKey(), g.host());
            }
        }
        Map<Integer, StallCulprit> out = new LinkedHashMap<>();
        reports.culprits(run, gap, hostOfRank, out);
        List<RankProcess> fresh = processes.fresh(run);
        processes.culprits(fresh, out);
        gpus.culprits(run, states, fresh, processes, out);
        return new ArrayList<>(out.values());
    }

    /** The rest of the message and the suggestion; adds what the GPUs show to {@code evidence}. */
    private String[] describe(RunContext run, String phase, boolean named, List<StallCulprit> culprits,
            TreeSet<Integer> ranks, TreeSet<String> hosts, Map<String, StallGpus.State> states,
            Map<String, Object> evidence) {
        List<String> whys = culprits.stream()
                .map(c -> "rank " + c.rank() + (c.host() != null ? " on " + c.host() : "") + ": " + c.why()).toList();
        if (!whys.isEmpty()) {
            evidence.put("culprits", whys);
        }
        double busy = StallGpus.meanUtilization(states.values());
        if (!Double.isNaN(busy)) {
            evidence.put("gpu_utilization_ratio", Texts.round(busy, 3));
        }
        String others = gpus.othersWait(states, ranks, run);
        if (others != null) {
            evidence.put("others", others);
        }
        String spinning = StallGpus.spinningByCounters(states);
        if (spinning != null) {
            evidence.put("spinning", spinning);
            evidence.put("tensor_active_ratio", Texts.round(StallGpus.meanTensor(states), 3));
        }
        String othersText = others != null ? "; " + others : "";
        if (phase != null) {
            return phases.overrun(phase);
        } else if (named) {
            return new String[] {"; " + String.join("; ", whys) + othersText, "the run is hung on "
                    + (ranks.size() == 1 ? "rank " + ranks.first() : "ranks " + ranks)
                    + (hosts.isEmpty() ? "" : " (" + String.join(", ", hosts) + ")") + ": dump its stack (py-spy dump "
                    + "--pid PID) to see where it waits (a DataLoader worker, I/O, a deadlock), check that host's "
                    + "dmesg for XIDs; the other ranks wait for it in a collective until NCCL's watchdog kills the "
                    + "run (set a shorter timeout or restart from the last checkpoint now)"};
        } else if (!Double.isNaN(busy) && busy < 0.05) {
            return new String[] {"; the GPUs are idle", "the processes are alive but not computing: dump their stacks "
                    + "(py-spy dump --pid PID); a hang in a collective usually means one rank died or is stuck "
                    + "(NCCL_DEBUG=INFO, TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and a finite timeout make it fail instead "
                    + "of hang)"};
        } else if (spinning != null) {
            return new String[] {"; " + spinning, "every rank that spins waits in a collective for one that never "
                    + "joined it: dump the stacks (py-spy dump --pid PID) to find the rank elsewhere (a DataLoader, "
                    + "I/O, an exception swallowed by a worker), check dmesg for XIDs; NCCL's watchdog kills the run "
                    + "only at its timeout (TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and a shorter timeout fail it sooner)"};
        } else if (!Double.isNaN(busy)) {
            return new String[] {String.format(Locale.ROOT, "; the GPUs are %s busy", Texts.pct(busy)) + othersText,
                "if the log does not announce an evaluation or checkpoint, the GPUs' business may be NCCL spinning "
                        + "in a collective that one rank never joined: dump the stacks (py-spy dump --pid PID) and "
                        + "check that the log output is not buffered"};
        }
        return new String[] {"", "check the training process and its log (is it alive? is the log file still "
                + "written?)"};
    }

    static TreeSet<String> gpuHosts(RunContext run) {
        return run.gpus().stream().map(GpuSeries::host).filter(Objects::nonNull)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * {@code py-spy dump --pid 4242} with the PIDs the agents read for {@code ranks} (every rank when empty), the
     * host beside each when the ranks run on several; the placeholder when no PID is known.
     */
    static String pySpy(List<RankProcess> procs, Set<Integer> ranks) {
        List<RankProcess> chosen = procs.stream().filter(p -> ranks.isEmpty() || ranks.contains(p.rank()))
                .sorted(Comparator.comparingInt(RankProcess::rank)).limit(8).toList();
        if (chosen.isEmpty()) {
            return PY_SPY_PLACEHOLDER;
        }
        boolean severalHosts = chosen.stream().map(RankProcess::host).distinct().count() > 1;
        if (chosen.size() == 1) {
            RankProcess p = chosen.get(0);
            return "py-spy dump --pid " + p.pid() + (severalHosts || p.host() == null ? "" : " on " + p.host());
        }
        return "py-spy dump --pid P for each rank's P — " + chosen.stream().map(p -> "rank " + p.rank() + ": "
                + p.pid() + (severalHosts && p.host() != null ? " on " + p.host() : ""))
                .collect(Collectors.joining(", "));
    }
}
