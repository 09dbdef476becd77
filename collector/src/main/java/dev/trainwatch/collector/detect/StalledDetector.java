package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code stalled}: no progress. The run's step reports stop for many expected report gaps: warning at the threshold,
 * critical at twice it; resolved by the next step.
 *
 * <p>It says which rank and host stopped, from what each rank shows where it runs: the rank whose own step reports
 * stopped first, a rank whose process sleeps without using the CPU (or is a zombie, or stopped) while the others
 * keep spinning, a rank whose GPU is idle while the others' GPUs are "busy" at a fraction of their training power
 * (NCCL's kernels spin while they wait in a collective) or busy at full power while the others are idle (stuck in a
 * kernel). When such a rank is found it is called a hang much sooner: one usual report gap plus
 * {@value #HANG_GRACE_SECONDS} s after the last report (at least {@value #HANG_MIN_SILENCE_SECONDS} s). A checkpoint
 * save or an evaluation that the log announced is told apart from a hang: it is given
 * {@value #CHECKPOINT_LIMIT_MINUTES} or {@value #EVALUATION_LIMIT_MINUTES} minutes. A rank busy on its CPU with its GPU idle (saving a checkpoint the log did not announce, evaluating on the
 * CPU) does not count as hung.
 *
 * <p>Where the GPUs have hardware activity counters (GPM, NVLink), "spinning" is read from them rather than guessed
 * from power: a GPU at "100%" whose tensor pipes and DRAM are idle and whose NVLink carries no data is spinning in a
 * collective, not computing. The message says so, and names the ranks whose GPUs do not spin (idle, or still
 * computing) as the ones the others wait for.
 */
public final class StalledDetector implements Detector {

    /** A named hang is called this long after the next report was due … */
    static final double HANG_GRACE_SECONDS = 20;
    /** … and never sooner after the last report than this: a rank's CPU use is read over 30 s. */
    static final double HANG_MIN_SILENCE_SECONDS = 30;
    static final int CHECKPOINT_LIMIT_MINUTES = 15;
    static final int EVALUATION_LIMIT_MINUTES = 30;
    /** A process using less than this share of a core is not working. */
    static final double ASLEEP_CPU = 0.05;
    /** A spinning collective keeps its process on the CPU at least this much. */
    static final double SPINNING_CPU = 0.3;
    /** Tensor pipes busy less than this share of the time: not computing. */
    static final double NO_TENSOR = 0.05;
    /** DRAM bandwidth under this share: not moving data either (a memory-bound step stays above it). */
    static final double NO_DRAM = 0.05;
    /** NVLink traffic under this (bytes per second, received plus sent): no collective is moving data. */
    static final double NO_NVLINK = 1e6;

    private final DetectorSettings.Stalled s;

    public StalledDetector(DetectorSettings settings) {
        this.s = settings.stalled();
    }

    @Override
    public AnomalyKind kind() {
        return AnomalyKind.STALLED;
    }

    /** A rank named as the one that stopped, and why. */
    private record Culprit(int rank, String host, String why, boolean busyOnCpu) {
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        StepSeries steps = run.steps();
        int n = steps.size();
        if (n == 0) {
            return Optional.empty();
        }
        double lastTs = steps.ts(n - 1);
        // Progress is any rank's report: when the lead rank's reports stop while the others go on, the run moves.
        RankSeries allRanks = run.ranks();
        for (int k = 0; k < allRanks.count(); k++) {
            StepSeries r = allRanks.steps(k);
            if (r.size() > 0) {
                lastTs = Math.max(lastTs, r.ts(r.size() - 1));
            }
        }
        double silence = run.now() - lastTs;
        if (run.now() < run.stepsLateUntil()) {
            // An agent is still delivering the run's backlog (after the collector was away): its newest steps are
            // on their way, not missing.
            return Optional.empty();
        }
        double gap = WindowStats.expectedReportGapSeconds(steps);
        double threshold = Math.max(s.minSilence().toMillis() / 1000.0, s.reportGapMultiple() * gap);
        String phase = run.announcedPhase();
        if (phase != null) {
            double limit = 60.0 * (phase.startsWith("checkpoint") ? CHECKPOINT_LIMIT_MINUTES : EVALUATION_LIMIT_MINUTES);
            threshold = Math.max(threshold, limit);
        }
        double hangAfter = Math.max(HANG_MIN_SILENCE_SECONDS, gap + HANG_GRACE_SECONDS);
        if (!(silence >= Math.min(threshold, hangAfter))) {
            return Optional.empty();
        }
        List<RankProcess> procs = run.rankProcesses();
        Map<String, GpuState> gpuStates = gpuStates(run, lastTs);
        List<Culprit> culprits = culprits(run, procs, gpuStates, lastTs, gap);
        int rankCount = Math.max(procs.size(), run.ranks().count());
        boolean named = !culprits.isEmpty() && culprits.stream().noneMatch(Culprit::busyOnCpu)
                && (rankCount == 0 || culprits.size() * 2 < Math.max(2, rankCount) || oneOfTwo(culprits.size(), rankCount));
        boolean early = silence < threshold;
        if (early && (!named || phase != null)) {
            return Optional.empty(); // past the quick mark, but nobody to name: wait for the usual threshold
        }
        Severity severity = silence >= 2 * threshold ? Severity.CRITICAL : Severity.WARNING;
        long lastStep = steps.step(n - 1);
        Map<String, Object> evidence = new LinkedHashMap<>();
        TreeSet<Integer> ranks = new TreeSet<>();
        TreeSet<String> hosts = new TreeSet<>();
        for (Culprit c : culprits) {
            ranks.add(c.rank());
            if (c.host() != null) {
                hosts.add(c.host());
            }
        }
        if (culprits.isEmpty()) {
            for (GpuSeries g : run.gpus()) {
                if (g.host() != null) {
                    hosts.add(g.host());
                }
            }
        }
        evidence.put("ranks", List.copyOf(ranks));
        evidence.put("hosts", List.copyOf(hosts));
        evidence.put("last_step", lastStep);
        evidence.put("last_step_ts", lastTs);
        evidence.put("seconds_since_last_step", Math.round(silence));
        evidence.put("expected_report_gap_seconds", Texts.round(gap, 2));
        evidence.put("threshold_seconds", Math.round(named ? Math.min(threshold, hangAfter) : threshold));
        if (phase != null) {
            evidence.put("announced_phase", phase);
            evidence.put("announced_phase_ts", run.announcedPhaseTs());
        }
        List<String> whys = new ArrayList<>();
        for (Culprit c : culprits) {
            whys.add("rank " + c.rank() + (c.host() != null ? " on " + c.host() : "") + ": " + c.why());
        }
        if (!whys.isEmpty()) {
            evidence.put("culprits", whys);
        }
        double busy = meanUtilization(gpuStates);
        if (!Double.isNaN(busy)) {
            evidence.put("gpu_utilization_ratio", Texts.round(busy, 3));
        }
        String others = othersWait(gpuStates, procs, ranks, run);
        if (others != null) {
            evidence.put("others", others);
        }
        String spinning = spinningByCounters(gpuStates);
        if (spinning != null) {
            evidence.put("spinning", spinning);
            double tensor = 0;
            int t = 0;
            for (GpuState g : gpuStates.values()) {
                if (g.hasCounters()) {
                    tensor += g.tensor();
                    t++;
                }
            }
            evidence.put("tensor_active_ratio", Texts.round(tensor / t, 3));
        }
        StringBuilder message = new StringBuilder(String.format(Locale.ROOT,
                "no step since step %d, %s ago (a report is expected every %s)", lastStep, Texts.secs(silence),
                Texts.secs(gap)));
        String suggestion;
        if (phase != null) {
            message.append("; the log announced ").append(phase.startsWith("checkpoint") ? "a checkpoint save"
                    : "an evaluation").append(" that has lasted longer than ")
                    .append(phase.startsWith("checkpoint") ? CHECKPOINT_LIMIT_MINUTES : EVALUATION_LIMIT_MINUTES)
                    .append(" minutes");
            suggestion = phase.startsWith("checkpoint")
                    ? "a checkpoint save this long is stuck: check the checkpoint directory's disk (df, a full or hung "
                            + "network file system) and dump the saving rank's stack (py-spy dump --pid PID)"
                    : "an evaluation this long is stuck or far too large: dump the stacks (py-spy dump --pid PID), "
                            + "and evaluate on fewer samples or less often";
        } else if (named) {
            message.append("; ").append(String.join("; ", whys));
            if (others != null) {
                message.append("; ").append(others);
            }
            suggestion = "the run is hung on " + (ranks.size() == 1 ? "rank " + ranks.first() : "ranks " + ranks)
                    + (hosts.isEmpty() ? "" : " (" + String.join(", ", hosts) + ")") + ": dump its stack (py-spy dump "
                    + "--pid PID) to see where it waits (a DataLoader worker, I/O, a deadlock), check that host's "
                    + "dmesg for XIDs; the other ranks wait for it in a collective until NCCL's watchdog kills the "
                    + "run (set a shorter timeout or restart from the last checkpoint now)";
        } else if (!Double.isNaN(busy) && busy < 0.05) {
            message.append("; the GPUs are idle");
            suggestion = "the processes are alive but not computing: dump their stacks (py-spy dump --pid PID); a "
                    + "hang in a collective usually means one rank died or is stuck (NCCL_DEBUG=INFO, "
                    + "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and a finite timeout make it fail instead of hang)";
        } else if (spinning != null) {
            message.append("; ").append(spinning);
            suggestion = "every rank that spins waits in a collective for one that never joined it: dump the stacks "
                    + "(py-spy dump --pid PID) to find the rank elsewhere (a DataLoader, I/O, an exception swallowed "
                    + "by a worker), check dmesg for XIDs; NCCL's watchdog kills the run only at its timeout "
                    + "(TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and a shorter timeout fail it sooner)";
        } else if (!Double.isNaN(busy)) {
            message.append(String.format(Locale.ROOT, "; the GPUs are %s busy", Texts.pct(busy)));
            if (others != null) {
                message.append("; ").append(others);
            }
            suggestion = "if the log does not announce an evaluation or checkpoint, the GPUs' business may be NCCL "
                    + "spinning in a collective that one rank never joined: dump the stacks (py-spy dump --pid PID) "
                    + "and check that the log output is not buffered";
        } else {
            suggestion = "check the training process and its log (is it alive? is the log file still written?)";
        }
        // The real PIDs in the command, not a placeholder: the hung ranks', else every rank's.
        suggestion = suggestion.replace(PY_SPY_PLACEHOLDER, pySpy(procs, ranks));
        return Optional.of(new Finding(severity, message.toString(), evidence, suggestion));
    }

    static final String PY_SPY_PLACEHOLDER = "py-spy dump --pid PID";

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
        List<String> each = new ArrayList<>();
        for (RankProcess p : chosen) {
            each.add("rank " + p.rank() + ": " + p.pid() + (severalHosts && p.host() != null ? " on " + p.host() : ""));
        }
        return "py-spy dump --pid P for each rank's P — " + String.join(", ", each);
    }

    /**
     * What each GPU did in the last 10 s and how it compares with its own power while training; tensor and DRAM
     * activity and NVLink traffic where the GPU has the counters (else NaN).
     */
    private record GpuState(String uuid, String host, double util, double powerRatio, double tensor, double dram,
                            double nvlink) {

        boolean hasCounters() {
            return !Double.isNaN(tensor);
        }

        /** Busy by utilisation, idle by the counters: a kernel that waits (a collective, a busy-wait). */
        boolean spinsByCounters() {
            return util >= 0.9 && hasCounters() && tensor < NO_TENSOR && !(dram >= NO_DRAM) && !(nvlink >= NO_NVLINK);
        }

        /** Spinning: by the counters where the GPU has them, else busy at a fraction of its training power. */
        boolean spins() {
            return hasCounters() ? spinsByCounters() : util >= 0.9 && powerRatio < 0.7;
        }

        /** Busy and, by the counters, computing (tensor pipes at work). */
        boolean computes() {
            return util >= 0.9 && hasCounters() && tensor >= NO_TENSOR;
        }
    }

    private static Map<String, GpuState> gpuStates(RunContext run, double lastTs) {
        Map<String, GpuState> out = new LinkedHashMap<>();
        // The last 10 s: what the GPUs do now (a 30 s mean would still call a GPU idle just after a save ends).
        double recent = run.now() - 10;
        for (GpuSeries g : run.gpus()) {
            if (OomRiskDetector.stale(run, g)) {
                continue;
            }
            double util = WindowStats.meanUtilization(g, recent);
            double power = meanPower(g, recent, run.now() + 1);
            double trainingPower = meanPower(g, lastTs - 120, lastTs);
            double ratio = trainingPower > 0 && !Double.isNaN(power) ? power / trainingPower : Double.NaN;
            if (!Double.isNaN(util)) {
                out.put(g.uuid(), new GpuState(g.uuid(), g.host(), util, ratio, WindowStats.meanTensorActive(g, recent),
                        WindowStats.meanDramActive(g, recent), WindowStats.meanNvlinkRate(g, recent)));
            }
        }
        return out;
    }

    private static double meanPower(GpuSeries g, double from, double to) {
        double sum = 0;
        int n = 0;
        for (int i = g.firstIndexAtOrAfter(from); i < g.size() && g.ts(i) < to; i++) {
            double p = g.powerWatts(i);
            if (!Double.isNaN(p)) {
                sum += p;
                n++;
            }
        }
        return n > 0 ? sum / n : Double.NaN;
    }

    private static double meanUtilization(Map<String, GpuState> states) {
        double sum = 0;
        for (GpuState s : states.values()) {
            sum += s.util();
        }
        return states.isEmpty() ? Double.NaN : sum / states.size();
    }

    /** Ranks that stopped first, from their own reports, their processes and their GPUs. */
    private static List<Culprit> culprits(RunContext run, List<RankProcess> procs, Map<String, GpuState> gpus,
            double lastTs, double gap) {
        Map<Integer, Culprit> out = new LinkedHashMap<>();
        Map<Integer, String> gpuOfRank = run.gpuOfRank();
        Map<Integer, String> hostOfRank = new LinkedHashMap<>();
        for (RankProcess p : procs) {
            hostOfRank.put(p.rank(), p.host());
        }
        for (Map.Entry<Integer, String> e : gpuOfRank.entrySet()) {
            GpuState g = gpus.get(e.getValue());
            if (g != null && g.host() != null) {
                hostOfRank.putIfAbsent(e.getKey(), g.host());
            }
        }
        // 1. A rank whose own reports stopped a report gap before the others'.
        RankSeries ranks = run.ranks();
        if (ranks.count() >= 2) {
            double newest = Double.NEGATIVE_INFINITY;
            for (int k = 0; k < ranks.count(); k++) {
                StepSeries r = ranks.steps(k);
                if (r.size() > 0) {
                    newest = Math.max(newest, r.ts(r.size() - 1));
                }
            }
            for (int k = 0; k < ranks.count(); k++) {
                StepSeries r = ranks.steps(k);
                double last = r.size() > 0 ? r.ts(r.size() - 1) : Double.NaN;
                // Stopped just before the others (within three report gaps); a rank that stopped logging long ago
                // while the run went on is not the one that hung now.
                if (last < newest - Math.max(gap, 10) && last >= newest - 3 * Math.max(gap, 10)) {
                    int rank = ranks.rank(k);
                    out.put(rank, new Culprit(rank, hostOfRank.get(rank), String.format(Locale.ROOT,
                            "its last report was step %d, %s before the other ranks' last", r.step(r.size() - 1),
                            Texts.secs(newest - r.ts(r.size() - 1))), false));
                }
            }
        }
        // 2. A process asleep (or dead, or stopped) while the others spin.
        int spinning = 0;
        // Readings older than a minute (an agent that stopped sending them) say nothing about now.
        procs = procs.stream().filter(p -> run.now() - p.ts() <= 60).toList();
        for (RankProcess p : procs) {
            if (p.cpuRate() >= SPINNING_CPU) {
                spinning++;
            }
        }
        for (RankProcess p : procs) {
            boolean deadOrStopped = "Z".equals(p.state()) || "T".equals(p.state()) || "X".equals(p.state());
            // Asleep, not in I/O: a rank in uninterruptible I/O is usually writing a checkpoint or reading data;
            // if that never ends, the usual threshold says so.
            boolean asleep = p.cpuRate() < ASLEEP_CPU && !"R".equals(p.state()) && !"D".equals(p.state());
            if (deadOrStopped || asleep && spinning * 2 >= procs.size() && procs.size() >= 2) {
                String state = p.state() == null ? "" : switch (p.state()) {
                    case "Z" -> "a zombie (it exited, its parent has not reaped it)";
                    case "T" -> "stopped (a debugger or SIGSTOP)";
                    case "D" -> "in uninterruptible I/O";
                    case "S" -> "asleep";
                    default -> "in state " + p.state();
                };
                out.putIfAbsent(p.rank(), new Culprit(p.rank(), p.host(), String.format(Locale.ROOT,
                        "its process (pid %d) is %s and used %s of a core in the last 30 s while %d of %d ranks spin",
                        p.pid(), state, Texts.pct(Double.isNaN(p.cpuRate()) ? 0 : p.cpuRate()), spinning,
                        procs.size()), false));
            }
        }
        // 3. A GPU unlike the others: idle while they spin at low power, or at full power while they are idle.
        Set<Integer> namedByProcess = Set.copyOf(out.keySet());
        if (gpus.size() >= 2) {
            List<GpuState> spin = new ArrayList<>();
            List<GpuState> idle = new ArrayList<>();
            List<GpuState> full = new ArrayList<>();
            List<GpuState> computing = new ArrayList<>();
            for (GpuState g : gpus.values()) {
                if (g.util() < 0.05) {
                    idle.add(g);
                } else if (g.spins()) {
                    spin.add(g);
                } else if (g.computes()) {
                    computing.add(g);
                } else if (g.util() >= 0.9) {
                    full.add(g);
                }
            }
            boolean spinCounted = spin.stream().anyMatch(GpuState::hasCounters);
            List<GpuState> notSpinning = new ArrayList<>(idle);
            notSpinning.addAll(computing);
            List<GpuState> odd = List.of();
            String why = null;
            // The odd ones are fewer than half, or one of a 2-rank run's two GPUs.
            if (spin.size() * 2 > gpus.size() && spinCounted && !notSpinning.isEmpty()
                    && (notSpinning.size() * 2 < gpus.size() || oneOfTwo(notSpinning.size(), gpus.size()))) {
                // The counters say who waits and who does not: the odd ones out are idle or still computing.
                odd = notSpinning;
                why = null; // per GPU below
            } else if (!idle.isEmpty() && (spin.size() * 2 > gpus.size() && idle.size() * 2 < gpus.size()
                    || oneOfTwo(idle.size(), gpus.size()) && spin.size() == 1)) {
                odd = idle;
                why = "its GPU is idle while the others are busy at a fraction of their training power (NCCL waiting in "
                        + "a collective it never joined)";
            } else if (!full.isEmpty() && (idle.size() * 2 > gpus.size() && full.size() * 2 < gpus.size()
                    || oneOfTwo(full.size(), gpus.size()) && idle.size() == 1)) {
                odd = full;
                why = "its GPU is still busy at full power while the others are idle (stuck in a kernel)";
            }
            for (GpuState g : odd) {
                String whyThis = why != null ? why : g.util() < 0.05
                        ? String.format(Locale.ROOT, "its GPU is idle while the others spin in a collective (%d GPUs at "
                                + "%s \"utilisation\" with idle tensor pipes and no NVLink traffic)", spin.size(),
                                Texts.pct(meanUtil(spin)))
                        : String.format(Locale.ROOT, "its GPU still computes (tensor pipes %s busy) while the others "
                                + "spin in a collective waiting for it (%d GPUs at %s \"utilisation\" with idle tensor "
                                + "pipes and no NVLink traffic)", Texts.pct(g.tensor()), spin.size(),
                                Texts.pct(meanUtil(spin)));
                for (Map.Entry<Integer, String> e : gpuOfRank.entrySet()) {
                    if (e.getValue().equals(g.uuid())) {
                        RankProcess p = procs.stream().filter(x -> x.rank() == e.getKey()).findFirst().orElse(null);
                        boolean idleGpu = g.util() < 0.05;
                        boolean inIo = p != null && "D".equals(p.state()) && idleGpu;
                        // A process running right now is working (on the CPU, or its GPU just came back): not hung.
                        boolean busyCpu = p != null && idleGpu
                                && ("R".equals(p.state()) || p.cpuRate() >= 0.2) || inIo;
                        Culprit c = out.get(e.getKey());
                        if (c == null && contradicts(namedByProcess, gpus.size(), idleGpu)) {
                            continue;
                        }
                        if (c == null || busyCpu) {
                            out.put(e.getKey(), new Culprit(e.getKey(), g.host(), inIo
                                    ? "its GPU is idle while its process is in I/O (writing a checkpoint the log does "
                                            + "not announce?)"
                                    : busyCpu ? "its GPU is idle but its process works on the CPU (a checkpoint save or "
                                            + "an evaluation the log does not announce?)" : whyThis, busyCpu));
                        } else {
                            out.put(e.getKey(), new Culprit(c.rank(), c.host(), c.why() + "; " + whyThis, false));
                        }
                    }
                }
            }
        }
        return new ArrayList<>(out.values());
    }

    /**
     * Two GPUs, one idle and one busy, say only that they differ: without activity counters a GPU waiting in a
     * collective at full power looks like one stuck in a kernel. When the processes (or the ranks' own reports)
     * already named a rank, a busy GPU does not name the other one too (issue 44: the rank asleep was named with
     * the one that waited for it, so nobody was).
     */
    private static boolean contradicts(Set<Integer> namedByProcess, int gpuCount, boolean idleGpu) {
        return !namedByProcess.isEmpty() && gpuCount == 2 && !idleGpu;
    }

    private static double meanUtil(List<GpuState> gpus) {
        double sum = 0;
        for (GpuState g : gpus) {
            sum += g.util();
        }
        return gpus.isEmpty() ? Double.NaN : sum / gpus.size();
    }

    /**
     * The GPUs spinning by their counters, when that is what most GPUs with counters do: "N of M GPUs read X% busy
     * with idle tensor pipes and no NVLink traffic: spinning in a collective, not computing"; else null.
     */
    private static String spinningByCounters(Map<String, GpuState> gpus) {
        int withCounters = 0;
        List<GpuState> spin = new ArrayList<>();
        for (GpuState g : gpus.values()) {
            if (g.hasCounters()) {
                withCounters++;
                if (g.spinsByCounters()) {
                    spin.add(g);
                }
            }
        }
        if (spin.isEmpty() || spin.size() * 2 <= withCounters) {
            return null;
        }
        return String.format(Locale.ROOT, "%d of %d GPUs read %s busy while their tensor pipes are idle and NVLink "
                + "carries no data: they spin in a collective, not computing", spin.size(), gpus.size(),
                Texts.pct(meanUtil(spin)));
    }

    /**
     * One of two: a 2-rank run whose one rank shows the hang while the other waits for it ("fewer than half" can
     * never hold for two, and such a hang went unnamed).
     */
    private static boolean oneOfTwo(int odd, int of) {
        return odd == 1 && of == 2;
    }

    /** How the other ranks wait, from their GPUs and processes. */
    private static String othersWait(Map<String, GpuState> gpus, List<RankProcess> procs, TreeSet<Integer> culprits,
            RunContext run) {
        Map<Integer, String> gpuOfRank = run.gpuOfRank();
        double util = 0;
        double power = 0;
        int n = 0;
        int powerN = 0;
        for (Map.Entry<Integer, String> e : gpuOfRank.entrySet()) {
            if (culprits.contains(e.getKey())) {
                continue;
            }
            GpuState g = gpus.get(e.getValue());
            if (g != null) {
                util += g.util();
                n++;
                if (!Double.isNaN(g.powerRatio())) {
                    power += g.powerRatio();
                    powerN++;
                }
            }
        }
        if (n == 0 || culprits.isEmpty()) {
            return null;
        }
        util /= n;
        String text = String.format(Locale.ROOT, "the other ranks' GPUs are %s busy", Texts.pct(util));
        if (powerN > 0) {
            text += String.format(Locale.ROOT, " at %s of their training power", Texts.pct(power / powerN));
        }
        boolean countersSay = false;
        int withCounters = 0;
        int spinning = 0;
        for (Map.Entry<Integer, String> e : gpuOfRank.entrySet()) {
            GpuState g = culprits.contains(e.getKey()) ? null : gpus.get(e.getValue());
            if (g != null && g.hasCounters()) {
                withCounters++;
                spinning += g.spinsByCounters() ? 1 : 0;
            }
        }
        if (withCounters > 0) {
            countersSay = spinning * 2 > withCounters;
            if (countersSay) {
                text += " with idle tensor pipes and no NVLink traffic (spinning in a collective, waiting)";
            }
        } else if (util >= 0.9 && powerN > 0 && power / powerN < 0.7) {
            text += " (spinning in a collective, waiting)";
        }
        return text;
    }
}
