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

/**
 * Finds which GPUs belong to which run, poll after poll: the attached process and its descendants, or every compute
 * process grouped by the run its environment names or its launcher ancestor. A run whose processes have all exited
 * is reported once ended, with a {@code run_ended} event. Environments and launcher roots are cached per process
 * identity (pid and start time). Not thread-safe: one polling thread.
 */
public final class Attributor {

    /** Kind of the event emitted when a run ends. */
    public static final String RUN_ENDED = "run_ended";

    private static final double DEFAULT_RESCAN_SECONDS = 10.0;
    private static final double DEFAULT_REVALIDATE_SECONDS = 5.0;

    private final ProcSource proc;
    private final String host;
    /** Aliases sent per run: the job ids and the root process; a run has few. */
    static final int MAX_ALIASES = 8;
    private final Long attachPid;
    private final String runIdOverride;
    private final double rescanSeconds;
    private final double revalidateSeconds;
    private final Map<Long, CachedStat> statCache = new HashMap<>();
    /** Kubernetes: the pod of a process (its cgroup, the kubelet's directories). */
    private final PodLookup pods;
    /** Bytes per page of {@code rss} in {@code /proc/PID/stat}: the kernel's page size (64 KiB on Grace). */
    private final long pageBytes;

    private final Map<ProcKey, Classified> classified = new HashMap<>();
    private final Map<String, TrackedRun> runs = new LinkedHashMap<>();
    private Long attachStartTicks;
    private Set<Long> attachTree = Set.of();
    private double lastScanTs = Double.NEGATIVE_INFINITY;
    private final Set<ProcKey> knownOutsiders = new HashSet<>();
    /** Attach mode: when the attached process was first seen (unix seconds). */
    private double attachFirstSeenTs = Double.NaN;
    /** Attach mode: the attached launcher has not started a named rank yet, so its run is not reported. */
    private boolean waitingForRanks;

    /** How long an attached launcher's ranks (which name the run) are awaited before the launcher names it. */
    static final double LAUNCHER_WAIT_SECONDS = 300;

    /**
     * @param proc          the process table
     * @param host          this node's name, part of derived run ids
     * @param attachPid     the process to watch with its descendants, or null to attribute every compute process
     * @param runIdOverride the run id to use ({@code --run-id}), or null to find it
     */
    public Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride) {
        this(proc, host, attachPid, runIdOverride, DEFAULT_RESCAN_SECONDS, DEFAULT_REVALIDATE_SECONDS);
    }

    /**
     * @param rescanSeconds     attach mode: longest time between two scans of the whole process table
     * @param revalidateSeconds how long a process's {@code stat} is trusted before it is read again; a process
     *                          that exits is noticed within this time
     */
    Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride, double rescanSeconds,
               double revalidateSeconds) {
        this(proc, host, attachPid, runIdOverride, rescanSeconds, revalidateSeconds,
                new KubernetesPods(proc::cgroup, KubeletLogs.system()));
    }

    /** @param pods finds a process's Kubernetes pod (tests pass a fake node layout) */
    public Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride, PodLookup pods) {
        this(proc, host, attachPid, runIdOverride, DEFAULT_RESCAN_SECONDS, DEFAULT_REVALIDATE_SECONDS, pods);
    }

    Attributor(ProcSource proc, String host, Long attachPid, String runIdOverride, double rescanSeconds,
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

    /** What one poll found. */
    public record Update(List<RunAttribution> runs, List<AgentEvent> events) {
    }

    /** Attributes the GPUs of one poll ({@code ts}: unix seconds, for events). */
    public Update update(List<GpuSample> samples, double ts) {
        if (reuse && memo != null && ts >= memoTs && ts < memoUntil && sameProcesses(memoSamples, samples)) {
            return memo;
        }
        Update update = attribute(samples, ts);
        // Kept for the next polls when nothing it was made from can change before memoUntil: the same compute
        // processes on the same GPUs, every process's stat still trusted, the children scan still current. A poll
        // that ended a run (an event) and attach mode (its own rescans) are never reused.
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

    /** Tests compare with an attributor that computes every poll. */
    boolean reuse = true;
    /** The previous poll's result while it stands for the next polls (see {@link #update}), else null. */
    private Update memo;
    private List<GpuSample> memoSamples;
    private double memoTs;
    private double memoUntil;

    /** Until when every input of an attribution but the GPUs' process lists stays what it was. */
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

    /** The same GPUs (index, UUID, lost or not) listing the same compute processes in the same order. */
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
                // A failed read is not "no processes": keep what we knew about this GPU.
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

    /** True once the attached process and all its descendants have exited (always false without --attach). */
    public boolean attachedRunEnded() {
        return attachPid != null
                && (attachStartTicks != null && runs.isEmpty() && !waitingForRanks || attachGoneBeforeSeen);
    }

    /** The attached process exited before the first scan saw it: waiting for its end would wait forever. */
    private boolean attachGoneBeforeSeen;

    /** How often the whole process table is read to find the ranks' DataLoader workers. */
    static final double CHILDREN_RESCAN_SECONDS = 10;
    /**
     * The children of each process, summed, from the newest scan: every process's stat, held 10 s, overflowed the
     * survivor spaces and was promoted (docs/PERFORMANCE.md).
     */
    private Map<Long, Workers> childrenByParent;

    /** A process's children, summed; CPU seconds added in the order the scan read them. */
    private record Workers(int count, long rssPages, double cpuSeconds) {
        static final Workers NONE = new Workers(0, 0, 0);

        Workers plus(ProcStat child) {
            return new Workers(count + 1, rssPages + child.rssPages(), cpuSeconds + child.cpuSeconds());
        }
    }
    private double childrenScannedTs = Double.NEGATIVE_INFINITY;

    /** The children of {@code pid} (DataLoader workers), from a scan at most every 10 s. */
    private Workers children(long pid, double ts) {
        if (childrenByParent == null || ts - childrenScannedTs >= CHILDREN_RESCAN_SECONDS || ts < childrenScannedTs) {
            boolean full = ppidByPid == null || ts - fullScanTs >= FULL_SCAN_SECONDS || ts < fullScanTs;
            Set<Long> ranks = new HashSet<>();
            for (TrackedRun run : runs.values()) {
                ranks.addAll(run.members.keySet());
            }
            Map<Long, Workers> scan = new HashMap<>();
            long[] pids = proc.pidArray();
            long[] ppids = new long[pids.length];
            int known = 0;
            for (long p : pids) {
                long knownParent = full ? -1 : ParentTable.parentOf(ppidByPid, p);
                if (knownParent >= 0 && !ranks.contains(knownParent)) {
                    // Seen at the previous scan with a parent that is no rank: a process keeps its parent while the
                    // parent lives, so there is nothing to read. (A reused pid is caught by the next full scan.)
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

    /** How often every process's {@code stat} is read again; in between, only new processes and the ranks' children. */
    static final double FULL_SCAN_SECONDS = 60;
    /** Each process's parent at the newest scan ({@link ParentTable}). */
    private long[] ppidByPid;

    /**
     * Each process's parent as one sorted {@code long}, the pid in the high half: 8 bytes a process where a map took
     * about 60, and a map of a few thousand processes held 10 s was promoted at every young collection.
     */
    static final class ParentTable {
        private ParentTable() {
        }

        /** Pids and parents are below 2^32 (Linux's pid_max is at most 2^22). */
        static long entry(long pid, long ppid) {
            return pid << 32 | (ppid & 0xffff_ffffL);
        }

        static long[] of(long[] entries, int n) {
            long[] table = Arrays.copyOf(entries, n);
            Arrays.sort(table);
            return table;
        }

        /** The parent of {@code pid} in {@code table}, or -1 when it is not there. */
        static long parentOf(long[] table, long pid) {
            if (table == null) {
                return -1;
            }
            // The pid's entry is the first at or above pid << 32 (its low half, the parent, is never negative).
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
                    // NVML lists no memory for this rank: it has not allocated yet, or NVML reports pids of another
                    // PID namespace (a container). The device torch picks is cuda:LOCAL_RANK of the visible ones.
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
        for (String uuid : run.gpuUuids) {
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

    /** Files a run's processes write their output to, kept per run: where a traceback goes that the log lacks. */
    static final int MAX_OUTPUTS = 4;

    /** Reads a member's stdout and stderr targets once per process; regular files only (not pipes, terminals). */
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

    /** The job ids in the run's environment and host:pid of its root process, at most {@link #MAX_ALIASES}. */
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

    /** Children of a rank inherit its environment; the rank is the topmost process carrying those values. */
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

    /** Attach mode: the attached process's tree, named by --run-id, its environment, or the root. */
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

    /**
     * The stats of the attached tree: the whole table is read again when an unknown process is on a GPU, every
     * {@code rescanSeconds} and until the tree is known; else only the tree's (cached) stats.
     */
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
            // Not in the process table at all (a stat that failed once is not an exit).
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

    /** The attached run's name, or null while an attached launcher's ranks (which name the run) are awaited. */
    private String attachedRunId(Map<Long, ProcStat> members, Map<Long, Set<String>> gpusByPid, double ts) {
        String runId = runIdOverride;
        if (runId == null) {
            for (ProcStat member : members.values()) {
                runId = classify(member).envRunId;
                if (runId != null) {
                    break;
                }
            }
        }
        ProcStat root = members.get(attachPid);
        waitingForRanks = runId == null && runs.isEmpty() && root != null && ts - attachFirstSeenTs < LAUNCHER_WAIT_SECONDS
                && members.keySet().stream().noneMatch(gpusByPid::containsKey)
                && ProcessTree.isLauncher(root.comm(), proc.commandLine(root.pid()));
        if (waitingForRanks) {
            return null;
        }
        if (runId == null && !runs.isEmpty()) {
            // No process left names the run (the ranks exited, the launcher is finishing, or the root exited and its
            // orphans live on): it is the same run, under the name it already has.
            runId = runs.keySet().iterator().next();
        }
        return runId != null ? runId : RunIds.derived(host, root != null ? root : members.values().iterator().next());
    }

    /** A run first named after its root takes the name its ranks' environment gives, keeping its state. */
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

    /** No attach: every compute process, grouped by the run its environment names or by its launcher. */
    private Map<String, Map<Long, ProcStat>> observeComputeProcesses(Map<Long, Set<String>> gpusByPid, double ts) {
        Map<String, Map<Long, ProcStat>> observed = new LinkedHashMap<>();
        for (Long pid : new TreeSet<>(gpusByPid.keySet())) {
            Optional<ProcStat> stat = stat(pid, ts);
            if (stat.isEmpty()) {
                // Not in our PID namespace (or gone): nothing to learn about it.
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
            // A Kubernetes job names the run on every node alike; then the job ids of the environment.
            String job = KubernetesJob.jobName(env, pod);
            String runId = KubernetesJob.runId(env, pod);
            return new Classified(env, runId != null ? RunIds.safe(runId) : RunIds.fromEnvironment(env),
                    launcherRoot(stat), pod, job);
        });
    }

    /** The topmost launcher above a process, or the process itself when its parent launched nothing. */
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

    /** A process's stat, re-read at most every {@code revalidateSeconds} (every poll would be most of our CPU). */
    private Optional<ProcStat> stat(long pid, double ts) {
        CachedStat cached = statCache.get(pid);
        if (cached != null && ts >= cached.readTs() && ts - cached.readTs() < revalidateSeconds) {
            return Optional.ofNullable(cached.stat());
        }
        Optional<ProcStat> stat = proc.stat(pid);
        // Absence is cached too: NVML may list PIDs of another PID namespace on every poll.
        statCache.put(pid, new CachedStat(stat.orElse(null), ts));
        return stat;
    }

    /** A stat as read at {@code readTs}; a null stat means the process did not exist then. */
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
