package dev.trainwatch.agent.attribution;

import dev.trainwatch.agent.k8s.KubeletLogs;
import dev.trainwatch.agent.k8s.KubernetesJob;
import dev.trainwatch.agent.k8s.KubernetesPods;
import dev.trainwatch.agent.k8s.PodIdentity;
import dev.trainwatch.agent.k8s.PodLookup;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunEnding;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Finds which GPUs belong to which run, poll after poll: the attached process's tree, or every compute process grouped
 * by the run its environment names or its launcher ancestor; a run whose processes all exited ends once, with
 * {@code run_ended}. Caches per process identity (pid, start time). Not thread-safe.
 */
public final class Attributor {

    public static final String RUN_ENDED = "run_ended";

    private static final double DEFAULT_RESCAN_SECONDS = 10.0;
    private static final double DEFAULT_REVALIDATE_SECONDS = 5.0;

    private final ProcSource proc;
    private final String host;
    static final int MAX_ALIASES = 8;
    private final Long attachPid;
    private final String runIdOverride;
    private final double rescanSeconds;
    private final double revalidateSeconds;
    private final Map<Long, CachedStat> statCache = new HashMap<>();
    private final PodLookup pods;
    private final long pageBytes;

    private final Map<ProcKey, Classified> classified = new HashMap<>();
    private final Map<String, TrackedRun> runs = new LinkedHashMap<>();
    private Long attachStartTicks;
    private Set<Long> attachTree = Set.of();
    private double lastScanTs = Double.NEGATIVE_INFINITY;
    private final Set<ProcKey> knownOutsiders = new HashSet<>();
    private double attachFirstSeenTs = Double.NaN;
    private boolean waitingForRanks;

    static final double LAUNCHER_WAIT_SECONDS = 300;

    /** {@code attachPid}: watched with its descendants, or null for every compute process. */
    public Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride) {
        this(proc, host, attachPid, runIdOverride, DEFAULT_RESCAN_SECONDS, DEFAULT_REVALIDATE_SECONDS);
    }

    /** {@code revalidateSeconds}: how long a stat is trusted; an exit is noticed within it. */
    Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride, double rescanSeconds,
               double revalidateSeconds) {
        this(proc, host, attachPid, runIdOverride, rescanSeconds, revalidateSeconds,
                new KubernetesPods(proc::cgroup, KubeletLogs.system()));
    }

    public Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride, double rescanSeconds,
                      double revalidateSeconds, PodLookup pods) {
        this.pods = pods;
        this.proc = proc;
        this.pageBytes = proc.pageBytes();
        this.host = host;
        this.attachPid = attachPid;
        this.runIdOverride = runIdOverride == null || runIdOverride.isBlank() ? null : runIdOverride;
        this.rescanSeconds = rescanSeconds;
        this.revalidateSeconds = revalidateSeconds;
    }

    public record Update(List<RunAttribution> runs, List<AgentEvent> events) {
    }

    public Update update(List<GpuSample> samples, double ts) {
        if (reuse && memo != null && ts >= memoTs && ts < memoUntil && sameProcesses(memoSamples, samples)) {
            return memo;
        }
        Update update = attribute(samples, ts);
        // Reused while nothing it was made from can change before memoUntil; never after a run ended or in attach mode.
        if (attachPid == null && update.events().isEmpty()) {
            memo = update;
            memoSamples = samples;
            memoTs = ts;
            memoUntil = trustedUntil();
        } else {
            memo = null;
            memoSamples = null;
        }
        return update;
    }

    boolean reuse = true;
    private Update memo;
    private List<GpuSample> memoSamples;
    private double memoTs;
    private double memoUntil;

    private double trustedUntil() {
        double until = Double.POSITIVE_INFINITY;
        for (CachedStat cached : statCache.values()) {
            until = Math.min(until, cached.readTs() + revalidateSeconds);
        }
        if (childrenByParent != null) {
            until = Math.min(until, childrenScannedTs + CHILDREN_RESCAN_SECONDS);
        }
        return until;
    }

    static boolean sameProcesses(List<GpuSample> before, List<GpuSample> now) {
        if (before == null || before.size() != now.size()) {
            return false;
        }
        for (int i = 0; i < now.size(); i++) {
            GpuSample a = before.get(i);
            GpuSample b = now.get(i);
            if (a.index() != b.index() || !Objects.equals(a.uuid(), b.uuid()) || !Objects.equals(a.lost(), b.lost())) {
                return false;
            }
            List<GpuProcess> pa = a.processes();
            List<GpuProcess> pb = b.processes();
            if (pa == null || pb == null) {
                if (pa != pb) {
                    return false;
                }
                continue;
            }
            if (pa.size() != pb.size()) {
                return false;
            }
            for (int j = 0; j < pa.size(); j++) {
                if (pa.get(j).pid() != pb.get(j).pid()) {
                    return false;
                }
            }
        }
        return true;
    }

    private Update attribute(List<GpuSample> samples, double ts) {
        Map<Long, Set<String>> gpusByPid = new HashMap<>();
        Set<String> unknownProcessGpus = new HashSet<>();
        for (GpuSample sample : samples) {
            if (Boolean.TRUE.equals(sample.lost()) || sample.processes() == null) {
                // a failed read is not "no processes": keep what we knew about this GPU
                unknownProcessGpus.add(sample.uuid());
                continue;
            }
            for (GpuProcess process : sample.processes()) {
                gpusByPid.computeIfAbsent(process.pid(), k -> new TreeSet<>()).add(sample.uuid());
            }
        }

        Map<String, Map<Long, ProcStat>> observed = attachPid != null ? observeAttached(gpusByPid, ts)
                : observeComputeProcesses(gpusByPid, ts);

        List<RunAttribution> result = new ArrayList<>();
        List<AgentEvent> events = new ArrayList<>();
        Set<Long> livePids = new HashSet<>();
        for (Map.Entry<String, Map<Long, ProcStat>> entry : observed.entrySet()) {
            TrackedRun run = runs.computeIfAbsent(entry.getKey(), TrackedRun::new);
            run.members.putAll(entry.getValue());
        }
        for (Iterator<TrackedRun> it = runs.values().iterator(); it.hasNext(); ) {
            TrackedRun run = it.next();
            Map<Long, ProcStat> alive = new TreeMap<>();
            for (ProcStat member : run.members.values()) {
                ProcStat now = observed.getOrDefault(run.runId, Map.of()).get(member.pid());
                if (now == null) {
                    now = stat(member.pid(), ts).filter(s -> s.startTimeTicks() == member.startTimeTicks())
                            .orElse(null);
                }
                if (now != null) {
                    alive.put(now.pid(), now);
                }
            }
            run.members.clear();
            run.members.putAll(alive);
            if (alive.isEmpty()) {
                it.remove();
                result.add(new RunAttribution(run.runId, List.of(), List.copyOf(run.gpuUuids), List.of(),
                        run.masterAddr, true, null, null, null, null, null));
                events.add(new AgentEvent(ts, RUN_ENDED, null, null, run.runId,
                        "every process of run " + run.runId + " on this node has exited", null,
                        new RunEnding(null, false, null, List.copyOf(run.outputs)), null, null));
                continue;
            }
            livePids.addAll(alive.keySet());
            result.add(describe(run, gpusByPid, unknownProcessGpus, samples, ts));
        }
        classified.keySet().removeIf(key -> !livePids.contains(key.pid()) && !gpusByPid.containsKey(key.pid()));
        statCache.keySet().removeIf(pid -> !livePids.contains(pid) && !gpusByPid.containsKey(pid));
        return new Update(List.copyOf(result), List.copyOf(events));
    }

    public boolean attachedRunEnded() {
        return attachPid != null
                && (attachStartTicks != null && runs.isEmpty() && !waitingForRanks || attachGoneBeforeSeen);
    }

    private boolean attachGoneBeforeSeen;

    static final double CHILDREN_RESCAN_SECONDS = 10;
    /** Children of each process, summed: every process's stat, held 10 s, was promoted (docs/PERFORMANCE.md). */
    private Map<Long, Workers> childrenByParent;

    private record Workers(int count, long rssPages, double cpuSeconds) {
        static final Workers NONE = new Workers(0, 0, 0);

        Workers plus(ProcStat child) {
            return new Workers(count + 1, rssPages + child.rssPages(), cpuSeconds + child.cpuSeconds());
        }
    }
    private double childrenScannedTs = Double.NEGATIVE_INFINITY;

    private Workers children(long pid, double ts) {
        if (childrenByParent == null || ts - childrenScannedTs >= CHILDREN_RESCAN_SECONDS || ts < childrenScannedTs) {
            boolean full = ppidByPid == null || ts - fullScanTs >= FULL_SCAN_SECONDS || ts < fullScanTs;
            Set<Long> ranks = runs.values().stream().flatMap(run -> run.members.keySet().stream())
                    .collect(Collectors.toSet()); // every 10 s at most
            Map<Long, Workers> scan = new HashMap<>();
            long[] pids = proc.pidArray();
            long[] ppids = new long[pids.length];
            int known = 0;
            for (long p : pids) {
                long knownParent = full ? -1 : ParentTable.parentOf(ppidByPid, p);
                if (knownParent >= 0 && !ranks.contains(knownParent)) {
                    // a process keeps its parent while the parent lives (a reused pid is caught by the next full scan)
                    ppids[known++] = ParentTable.entry(p, knownParent);
                    continue;
                }
                Optional<ProcStat> st = proc.stat(p);
                if (st.isPresent()) {
                    ppids[known++] = ParentTable.entry(p, st.get().ppid());
                    scan.put(st.get().ppid(), scan.getOrDefault(st.get().ppid(), Workers.NONE).plus(st.get()));
                }
            }
            childrenByParent = scan;
            ppidByPid = ParentTable.of(ppids, known);
            childrenScannedTs = ts;
            if (full) {
                fullScanTs = ts;
            }
        }
        return childrenByParent.getOrDefault(pid, Workers.NONE);
    }

    static final double FULL_SCAN_SECONDS = 60;
    private long[] ppidByPid;

    /** Each process's parent as one sorted {@code long}, pid in the high half: 8 bytes a process where a map took 60. */
    static final class ParentTable {
        private ParentTable() {
        }

        static long entry(long pid, long ppid) {
            return pid << 32 | (ppid & 0xffff_ffffL);
        }

        static long[] of(long[] entries, int n) {
            long[] table = Arrays.copyOf(entries, n);
            Arrays.sort(table);
            return table;
        }

        static long parentOf(long[] table, long pid) {
            if (table == null) {
                return -1;
            }
            int i = Arrays.binarySearch(table, pid << 32);
            if (i < 0) {
                i = -i - 1;
            }
            return i < table.length && table[i] >>> 32 == pid ? table[i] & 0xffff_ffffL : -1;
        }
    }
    private double fullScanTs = Double.NEGATIVE_INFINITY;

    private RunAttribution describe(TrackedRun run, Map<Long, Set<String>> gpusByPid, Set<String> unknownProcessGpus,
                                    List<GpuSample> samples, double ts) {
        Set<String> gpus = new TreeSet<>();
        List<RankInfo> ranks = new ArrayList<>();
        String masterAddr = null;
        for (ProcStat member : run.members.values()) {
            noteOutputs(run, member);
            Set<String> own = gpusByPid.getOrDefault(member.pid(), Set.of());
            gpus.addAll(own);
            Map<String, String> env = classify(member).env;
            if (masterAddr == null) {
                masterAddr = ProcessEnvironment.stringValue(env, ProcessEnvironment.MASTER_ADDR);
            }
            Integer rank = ProcessEnvironment.intValue(env, ProcessEnvironment.RANK);
            Integer localRank = ProcessEnvironment.intValue(env, ProcessEnvironment.LOCAL_RANK);
            if ((rank != null || localRank != null) && !inheritsRank(run, member, env)) {
                if (own.isEmpty()) {
                    // no memory listed: not allocated yet, or pids of another namespace; torch picks cuda:LOCAL_RANK
                    own = VisibleDevices.resolve(env.get(ProcessEnvironment.CUDA_VISIBLE_DEVICES), localRank, samples);
                    gpus.addAll(own);
                }
                Workers workers = children(member.pid(), ts);
                ranks.add(new RankInfo(member.pid(), rank, localRank,
                        ProcessEnvironment.intValue(env, ProcessEnvironment.WORLD_SIZE), List.copyOf(own),
                        member.state() == '?' ? null : String.valueOf(member.state()), member.cpuSeconds(),
                        member.rssPages() * pageBytes, workers.count(), workers.rssPages() * pageBytes,
                        workers.cpuSeconds()));
            }
        }
        for (String uuid : run.gpuUuids) { // loops, not streams, on the poll's path: the agent runs without C2
            if (unknownProcessGpus.contains(uuid)) {
                gpus.add(uuid);
            }
        }
        ranks.sort(Comparator.comparing((RankInfo r) -> r.rank() == null ? Integer.MAX_VALUE : r.rank())
                .thenComparing(r -> r.localRank() == null ? Integer.MAX_VALUE : r.localRank())
                .thenComparingLong(RankInfo::pid));
        run.gpuUuids.clear();
        run.gpuUuids.addAll(gpus);
        run.masterAddr = masterAddr != null ? masterAddr : run.masterAddr;
        Classified inPod = null;
        for (ProcStat member : run.members.values()) {
            Classified c = classify(member);
            if (c.pod != null && (inPod == null || c.job != null && inPod.job == null)) {
                inPod = c;
            }
        }
        PodIdentity pod = inPod == null ? null : inPod.pod;
        return new RunAttribution(run.runId, List.copyOf(run.members.keySet()), List.copyOf(gpus), List.copyOf(ranks),
                run.masterAddr, null, aliases(run), pod == null ? null : pod.namespace(), pod == null ? null : pod.pod(),
                pod == null ? null : pod.container(), inPod == null ? null : inPod.job);
    }

    static final int MAX_OUTPUTS = 4;

    private void noteOutputs(TrackedRun run, ProcStat member) {
        if (!run.outputsRead.add(ProcKey.of(member)) || run.outputs.size() >= MAX_OUTPUTS) {
            return;
        }
        if (run.outputsRead.size() > 256) {
            run.outputsRead.clear();
        }
        for (int fd = 1; fd <= 2; fd++) {
            proc.descriptorTarget(member.pid(), fd)
                    .filter(t -> t.startsWith("/") && !t.startsWith("/dev/") && !t.startsWith("/proc/"))
                    .map(t -> t.endsWith(" (deleted)") ? t.substring(0, t.length() - " (deleted)".length()) : t)
                    .ifPresent(t -> {
                        if (run.outputs.size() < MAX_OUTPUTS) {
                            run.outputs.add(t);
                        }
                    });
        }
    }

    private List<String> aliases(TrackedRun run) {
        Set<String> aliases = new LinkedHashSet<>();
        for (ProcStat member : run.members.values()) {
            Map<String, String> env = classify(member).env;
            for (String key : List.of(ProcessEnvironment.SLURM_JOB_ID, ProcessEnvironment.TORCHELASTIC_RUN_ID)) {
                String value = RunIds.safe(ProcessEnvironment.stringValue(env, key));
                if (value != null && !value.equals(run.runId)) {
                    aliases.add(value);
                }
            }
            if (!run.members.containsKey(member.ppid())) {
                aliases.add(host + ":" + member.pid());
            }
            if (aliases.size() >= MAX_ALIASES) {
                break;
            }
        }
        return aliases.stream().limit(MAX_ALIASES).toList();
    }

    private boolean inheritsRank(TrackedRun run, ProcStat member, Map<String, String> env) {
        ProcStat parent = run.members.get(member.ppid());
        if (parent == null) {
            return false;
        }
        Map<String, String> parentEnv = classify(parent).env;
        return Objects.equals(parentEnv.get(ProcessEnvironment.RANK), env.get(ProcessEnvironment.RANK))
                && Objects.equals(parentEnv.get(ProcessEnvironment.LOCAL_RANK),
                env.get(ProcessEnvironment.LOCAL_RANK));
    }

    private Map<String, Map<Long, ProcStat>> observeAttached(Map<Long, Set<String>> gpusByPid, double ts) {
        if (attachedRunEnded()) {
            return Map.of();
        }
        Map<Long, ProcStat> table = readAttachedTree(gpusByPid, ts);
        Map<Long, ProcStat> members = new LinkedHashMap<>();
        for (Long pid : attachTree) {
            ProcStat stat = table.get(pid);
            if (stat != null) {
                members.put(pid, stat);
            }
        }
        Map<String, Map<Long, ProcStat>> observed = new LinkedHashMap<>();
        if (members.isEmpty()) {
            waitingForRanks = false;
            return observed;
        }
        String runId = attachedRunId(members, gpusByPid, ts);
        if (runId != null) {
            renameIfNeeded(runId);
            observed.put(runId, members);
        }
        return observed;
    }

    /** The whole table is read when an unknown process is on a GPU, every {@code rescanSeconds}, until the tree is known. */
    private Map<Long, ProcStat> readAttachedTree(Map<Long, Set<String>> gpusByPid, double ts) {
        boolean unknownOnGpu = false;
        for (Long pid : gpusByPid.keySet()) {
            if (!attachTree.contains(pid)) {
                Optional<ProcStat> stat = stat(pid, ts);
                if (stat.isPresent() && !knownOutsiders.contains(ProcKey.of(stat.get()))) {
                    unknownOnGpu = true;
                }
            }
        }
        Map<Long, ProcStat> table = new HashMap<>();
        if (!unknownOnGpu && ts - lastScanTs < rescanSeconds && !attachTree.isEmpty()) {
            for (Long pid : attachTree) {
                stat(pid, ts).ifPresent(stat -> table.put(stat.pid(), stat));
            }
            return table;
        }
        List<Long> pids = proc.pids();
        for (Long pid : pids) {
            proc.stat(pid).ifPresent(stat -> {
                table.put(stat.pid(), stat);
                statCache.put(stat.pid(), new CachedStat(stat, ts));
            });
        }
        lastScanTs = ts;
        ProcStat root = table.get(attachPid);
        if (attachStartTicks == null && !pids.isEmpty() && !pids.contains(attachPid)) {
            attachGoneBeforeSeen = true;
        }
        if (root != null && attachStartTicks == null) {
            attachStartTicks = root.startTimeTicks();
            attachFirstSeenTs = ts;
        }
        attachTree = root != null && root.startTimeTicks() == attachStartTicks
                ? ProcessTree.descendants(attachPid, table.values()) : Set.of();
        knownOutsiders.clear();
        for (Long pid : gpusByPid.keySet()) {
            ProcStat stat = table.get(pid);
            if (stat != null && !attachTree.contains(pid)) {
                knownOutsiders.add(ProcKey.of(stat));
            }
        }
        return table;
    }

    private String attachedRunId(Map<Long, ProcStat> members, Map<Long, Set<String>> gpusByPid, double ts) {
        String runId = runIdOverride != null ? runIdOverride : members.values().stream()
                .map(member -> classify(member).envRunId).filter(Objects::nonNull).findFirst().orElse(null);
        ProcStat root = members.get(attachPid);
        waitingForRanks = runId == null && runs.isEmpty() && root != null && ts - attachFirstSeenTs < LAUNCHER_WAIT_SECONDS
                && members.keySet().stream().noneMatch(gpusByPid::containsKey)
                && ProcessTree.isLauncher(root.comm(), proc.commandLine(root.pid()));
        if (waitingForRanks) {
            return null;
        }
        if (runId == null && !runs.isEmpty()) {
            // no process left names the run: it is the same run, under the name it has
            runId = runs.keySet().iterator().next();
        }
        return runId != null ? runId : RunIds.derived(host, root != null ? root : members.values().iterator().next());
    }

    private void renameIfNeeded(String runId) {
        if (runs.size() == 1 && !runs.containsKey(runId)) {
            TrackedRun old = runs.values().iterator().next();
            if (old.runId.startsWith(host + "-" + attachPid + "-")) {
                runs.clear();
                TrackedRun renamed = new TrackedRun(runId);
                renamed.members.putAll(old.members);
                renamed.gpuUuids.addAll(old.gpuUuids);
                renamed.masterAddr = old.masterAddr;
                renamed.outputs.addAll(old.outputs);
                runs.put(runId, renamed);
            }
        }
    }

    private Map<String, Map<Long, ProcStat>> observeComputeProcesses(Map<Long, Set<String>> gpusByPid, double ts) {
        Map<String, Map<Long, ProcStat>> observed = new LinkedHashMap<>();
        for (Long pid : new TreeSet<>(gpusByPid.keySet())) {
            Optional<ProcStat> stat = stat(pid, ts);
            if (stat.isEmpty()) {
                continue;
            }
            Classified c = classify(stat.get());
            String runId = runIdOverride != null ? runIdOverride
                    : c.envRunId != null ? c.envRunId : RunIds.derived(host, c.launcherRoot);
            Map<Long, ProcStat> members = observed.computeIfAbsent(runId, k -> new TreeMap<>());
            members.put(pid, stat.get());
            if (c.launcherRoot.pid() != pid) {
                members.put(c.launcherRoot.pid(), c.launcherRoot);
            }
        }
        return observed;
    }

    private Classified classify(ProcStat stat) {
        return classified.computeIfAbsent(ProcKey.of(stat), key -> {
            Map<String, String> env = proc.environment(stat.pid());
            PodIdentity pod = pods.pod(stat.pid()).orElse(null);
            String job = KubernetesJob.jobName(env, pod);
            String runId = KubernetesJob.runId(env, pod);
            return new Classified(env, runId != null ? RunIds.safe(runId) : RunIds.fromEnvironment(env),
                    launcherRoot(stat), pod, job);
        });
    }

    private ProcStat launcherRoot(ProcStat stat) {
        ProcStat root = stat;
        for (int depth = 0; depth < 64 && root.ppid() > 1; depth++) {
            Optional<ProcStat> parent = proc.stat(root.ppid());
            if (parent.isEmpty() || !ProcessTree.isLauncher(parent.get().comm(), proc.commandLine(parent.get().pid()))) {
                break;
            }
            root = parent.get();
        }
        return root;
    }

    private Optional<ProcStat> stat(long pid, double ts) {
        CachedStat cached = statCache.get(pid);
        if (cached != null && ts >= cached.readTs() && ts - cached.readTs() < revalidateSeconds) {
            return Optional.ofNullable(cached.stat());
        }
        Optional<ProcStat> stat = proc.stat(pid);
        statCache.put(pid, new CachedStat(stat.orElse(null), ts));
        return stat;
    }

    private record CachedStat(ProcStat stat, double readTs) {
    }

    private record ProcKey(long pid, long startTimeTicks) {
        static ProcKey of(ProcStat stat) {
            return new ProcKey(stat.pid(), stat.startTimeTicks());
        }
    }

    private record Classified(Map<String, String> env, String envRunId, ProcStat launcherRoot, PodIdentity pod,
                              String job) {
    }

    private static final class TrackedRun {
        final String runId;
        final Map<Long, ProcStat> members = new TreeMap<>();
        final Set<String> gpuUuids = new LinkedHashSet<>();
        final Set<String> outputs = new LinkedHashSet<>();
        final Set<ProcKey> outputsRead = new HashSet<>();
        String masterAddr;

        TrackedRun(String runId) {
            this.runId = runId;
        }
    }
}
