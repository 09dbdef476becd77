package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.AnomalyTracker;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.window.GpuWindow;
import dev.trainwatch.collector.state.window.HostMemoryWindow;
import dev.trainwatch.collector.state.window.RankBudget;
import dev.trainwatch.collector.state.window.StepWindow;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;

/**
 * What the fleet tracks (runs, GPUs, agents, nodes' memory, runs' other names) and the limits on it ({@link Slots},
 * {@link RankBudget}). Used under the {@link Fleet}'s lock, except the counts, published for lock-free readers.
 */
final class Registry {
    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);

    final FleetSettings settings;
    final double windowSeconds;
    private final DetectorSettings detectorSettings;

    private final Map<String, RunState> runs = new HashMap<>();
    private final Map<String, GpuState> gpus = new HashMap<>();
    private final Map<String, AgentState> agents = new HashMap<>();
    /** {@link #agents} by host, in their order there; null until asked for again after they changed. */
    private Map<String, List<AgentState>> agentsByHost;
    /** Each node's memory readings, by host (bounded by the agent limit). */
    private final Map<String, HostMemoryWindow> hostMemory = new HashMap<>();
    /** What the limits refused and forgot (see {@link Slots}: only entries that are not reporting are forgotten). */
    final Slots slots = new Slots();
    /** Other names of reported runs (job ids, host:pid) → the run id the agent uses; bounded like the runs. */
    private final Map<String, String> aliases = new LinkedHashMap<>();
    /** Rank windows of all runs together (see {@link RankBudget}). */
    final RankBudget rankBudget;

    /** What was applied (agent seqs, step sources), so that nothing is applied twice; see {@link AppliedLedger}. */
    AppliedLedger ledger = AppliedLedger.inMemory();

    /** Sizes published after each change, read without the lock. */
    private final AtomicInteger runCount = new AtomicInteger();
    private final AtomicInteger gpuCount = new AtomicInteger();
    private final AtomicInteger agentCount = new AtomicInteger();

    Registry(FleetSettings settings, DetectorSettings detectorSettings) {
        this.settings = settings;
        this.detectorSettings = detectorSettings;
        this.windowSeconds = settings.window().toMillis() / 1000.0;
        this.rankBudget = new RankBudget(settings.maxGpus());
    }

    // ---- runs

    RunState run(String runId) {
        return runId == null ? null : runs.get(runId);
    }

    Collection<RunState> runs() {
        return runs.values();
    }

    /** The run, created if new; when the run limit is full an idle run is forgotten or the new one refused. */
    RunState runOrCreate(String runId, double now) {
        RunState run = runs.get(runId);
        if (run != null) {
            return run;
        }
        if (runs.size() >= settings.maxRuns()) {
            makeRoomForRun(now, Set.of());
        }
        run = new RunState(runId, now, new StepWindow(windowSeconds, settings.stepWindowEntries()),
                new AnomalyTracker(detectorSettings, settings.anomalyHistory()));
        runs.put(runId, run);
        run.markDirty();
        publishCounts();
        return run;
    }

    /** Removes a run and gives back what it held (its rank windows, its GPUs' attribution). */
    void forget(RunState run) {
        runs.remove(run.runId());
        if (run.ranks() != null) {
            rankBudget.release(run.ranks().count());
        }
        for (String uuid : run.gpuUuids()) {
            GpuState g = gpus.get(uuid);
            if (g != null && run.runId().equals(g.runId)) {
                g.runId = null;
            }
        }
        publishCounts();
    }

    /** Forgets a run not reporting (none of {@code keep}) to make room, or throws {@link LimitReachedException}. */
    private void makeRoomForRun(double now, Set<String> keep) {
        Collection<RunState> candidates = keep.isEmpty() ? runs.values()
                : runs.values().stream().filter(r -> !keep.contains(r.runId())).toList();
        Slots.Room room = Slots.roomForRun(candidates, now, specRetentionSeconds());
        RunState victim = room.victim();
        if (victim == null) {
            if (FleetLog.due(limitLoggedAt, Slots.Kind.RUNS, now)) {
                LOG.log(System.Logger.Level.WARNING, "run limit {0} reached and every run is live: refusing new runs"
                        + " (counted in trainwatch_limit_refused_total; logged at most once a minute)",
                        settings.maxRuns());
            }
            throw slots.refuse(Slots.Kind.RUNS, settings.maxRuns(), room.retryAfterSeconds(now), now);
        }
        forgottenSinceLog++;
        if (FleetLog.due(limitLoggedAt, Slots.Kind.RUNS, now)) {
            LOG.log(System.Logger.Level.WARNING, "run limit {0} reached: forgot {1} ended or silent run(s), or specs"
                    + " whose run did not report within the spec retention, to make room, the latest {2} (logged at"
                    + " most once a minute)", settings.maxRuns(),
                    forgottenSinceLog, victim.runId());
            forgottenSinceLog = 0;
        }
        forget(victim);
        slots.forgot(Slots.Kind.RUNS);
    }

    /** Runs forgotten to make room since the last line about it. */
    private long forgottenSinceLog;
    /** When a line about each full limit was last logged ({@link FleetLog#due}). */
    private final Map<Slots.Kind, Double> limitLoggedAt = new EnumMap<>(Slots.Kind.class);

    // ---- other names of runs

    /** The run id an alias (job id, host:pid) stands for, or null. */
    String aliasTarget(String alias) {
        return aliases.get(alias);
    }

    /** Records {@code alias} as another name of {@code runId}; the oldest aliases go beyond four per run slot. */
    void alias(String alias, String runId) {
        aliases.remove(alias);
        aliases.put(alias, runId);
        while (aliases.size() > settings.maxRuns() * 4) {
            aliases.remove(aliases.keySet().iterator().next());
        }
    }

    // ---- GPUs

    GpuState gpu(String uuid) {
        return uuid == null ? null : gpus.get(uuid);
    }

    Collection<GpuState> gpus() {
        return gpus.values();
    }

    /** The GPUs of a run that are tracked, in the run's order. */
    List<GpuState> runGpus(RunState run) {
        List<GpuState> out = new ArrayList<>(); // a loop, not a stream: asked several times per evaluation
        for (String uuid : run.gpuUuids()) {
            GpuState g = gpus.get(uuid);
            if (g != null) {
                out.add(g);
            }
        }
        return out;
    }

    /** The GPU's state, created if new (room was made before its batch: {@link #makeRoomFor}); null when none. */
    GpuState gpuOrCreate(String uuid, double now) {
        GpuState g = gpus.get(uuid);
        if (g == null) {
            if (gpus.size() >= settings.maxGpus()) {
                return null;
            }
            g = new GpuState(new GpuWindow(uuid, windowSeconds, settings.gpuWindowEntries()));
            g.lastSeen = now;
            gpus.put(uuid, g);
            publishCounts();
        }
        return g;
    }

    // ---- room for a batch, before any of it is applied

    /**
     * Makes room for the GPUs and runs a batch brings, before any of it is applied: a refusal
     * ({@link LimitReachedException}, 429) leaves the fleet as it was, and the agent spools and retries.
     */
    void makeRoomFor(Set<String> newGpuUuids, Set<String> newRunIds, double now) {
        newGpuUuids.removeIf(gpus::containsKey);
        int missing = gpus.size() + newGpuUuids.size() - settings.maxGpus();
        if (missing > 0) {
            forgetSilent(gpus, x -> x.lastSeen, missing, Slots.Kind.GPUS, settings.maxGpus(), now, "GPU limit {0}"
                    + " reached and every GPU is live: refusing batches that bring new GPUs (their agents spool and"
                    + " retry; raise --max-gpus; logged at most once a minute)");
            publishCounts();
        }
        Set<String> named = Set.copyOf(newRunIds); // the batch's own runs give no slot to its new ones
        newRunIds.removeIf(runs::containsKey);
        while (runs.size() + newRunIds.size() > settings.maxRuns()) {
            makeRoomForRun(now, named); // forgets one run that is not reporting, or refuses
        }
    }

    // ---- specs

    /** Runs that are only a spec: accepted, nothing observed under them yet. */
    private List<RunState> specOnlyRuns() {
        return runs.values().stream().filter(r -> r.registeredSpec() != null && !r.ended() && !Slots.observed(r))
                .toList();
    }

    /** Room for a spec of a run not tracked yet, within the spec and run limits, or {@link LimitReachedException}. */
    void makeRoomForSpec(String runId, double now) {
        if (runs.containsKey(runId)) {
            return;
        }
        List<RunState> specOnly = specOnlyRuns();
        if (specOnly.size() >= settings.maxSpecs()) {
            // The victim is the one waiting longest past the retention; else retry when the first will be.
            Slots.Room room = Slots.roomForRun(specOnly, now, specRetentionSeconds());
            RunState expired = room.victim();
            if (expired == null) {
                throw slots.refuse(Slots.Kind.SPECS, settings.maxSpecs(), room.retryAfterSeconds(now), now);
            }
            LOG.log(System.Logger.Level.WARNING, "spec limit {0} reached: forgot the spec of run {1}, which did not"
                    + " report within {2} h of its registration", settings.maxSpecs(), expired.runId(),
                    settings.specRetention().toHours());
            forget(expired);
            slots.forgot(Slots.Kind.SPECS);
        }
        if (runs.size() >= settings.maxRuns()) {
            makeRoomForRun(now, Set.of());
        }
    }

    private double specRetentionSeconds() {
        return settings.specRetention().toMillis() / 1000.0;
    }

    // ---- agents

    AgentState agent(String agentId) {
        return agents.get(agentId);
    }

    Collection<AgentState> agents() {
        return agents.values();
    }

    /** The agents on any of {@code hosts}, in {@link #agents()}' order, from an index by host. */
    List<AgentState> agentsOn(Collection<String> hosts) {
        if (agentsByHost == null) {
            Map<String, List<AgentState>> index = new HashMap<>();
            int order = 0;
            for (AgentState a : agents.values()) {
                a.order = order++;
                if (a.host != null) {
                    index.computeIfAbsent(a.host, h -> new ArrayList<>()).add(a);
                }
            }
            agentsByHost = index;
        }
        if (hosts.size() == 1) {
            return agentsByHost.getOrDefault(hosts.iterator().next(), List.of());
        }
        List<AgentState> out = new ArrayList<>();
        for (String host : hosts) {
            out.addAll(agentsByHost.getOrDefault(host, List.of()));
        }
        out.sort(Comparator.comparingInt(a -> a.order));
        return out;
    }

    /** The agent's host is {@code host} (its newest batch's); the index by host follows when it moved. */
    void agentHost(AgentState agent, String host) {
        if (!Objects.equals(host, agent.host)) {
            agent.host = host;
            agentsChanged();
        }
    }

    /** An agent came, went or moved to another host: the index by host is built again when next asked. */
    private void agentsChanged() {
        agentsByHost = null;
    }

    /** A new agent's state; a silent agent gives its slot when the limit is full, else it throws. */
    AgentState newAgent(String agentId, double now) {
        if (agents.size() >= settings.maxAgents()) {
            forgetSilent(agents, a -> a.lastSeen, 1, Slots.Kind.AGENTS, settings.maxAgents(), now, "agent limit {0}"
                    + " reached and every agent is live: refusing new agents (logged at most once a minute)");
            agentsChanged();
        }
        AgentState agent = new AgentState(agentId);
        agents.put(agentId, agent);
        agentsChanged();
        publishCounts();
        return agent;
    }

    /**
     * Forgets the {@code missing} entries silent longest to make room, or throws {@link LimitReachedException} when
     * fewer are silent ({@code refusal}, with the limit as {0}, logged at most once a minute).
     */
    private <V> void forgetSilent(Map<String, V> entries, ToDoubleFunction<V> lastSeen, int missing, Slots.Kind kind,
                                  int limit, double now, String refusal) {
        List<String> silent = Slots.silentToForget(entries, lastSeen, now, missing);
        if (silent.size() < missing) {
            if (FleetLog.due(limitLoggedAt, kind, now)) {
                LOG.log(System.Logger.Level.WARNING, refusal, limit);
            }
            throw slots.refuse(kind, limit, Slots.retryAfterSeconds(entries.values(), lastSeen, now), now);
        }
        for (String key : silent) {
            entries.remove(key);
            slots.forgot(kind);
        }
    }

    // ---- nodes' memory

    HostMemoryWindow hostMemory(String host) {
        return hostMemory.get(host);
    }

    Collection<HostMemoryWindow> hostMemoryWindows() {
        return hostMemory.values();
    }

    /** The node's memory window, created if new (the oldest node's goes beyond the agent limit). */
    HostMemoryWindow hostMemoryOrCreate(String host) {
        HostMemoryWindow w = hostMemory.get(host);
        if (w == null) {
            if (hostMemory.size() >= settings.maxAgents()) {
                hostMemory.values().stream().min(Comparator.comparingDouble(HostMemoryWindow::lastSeen))
                        .ifPresent(oldest -> hostMemory.remove(oldest.host()));
            }
            w = new HostMemoryWindow(host);
            hostMemory.put(host, w);
        }
        return w;
    }

    // ---- limits

    List<Slots.Usage> limits() {
        return List.of(slots.usage(Slots.Kind.RUNS, runs.size(), settings.maxRuns()),
                slots.usage(Slots.Kind.GPUS, gpus.size(), settings.maxGpus()),
                slots.usage(Slots.Kind.AGENTS, agents.size(), settings.maxAgents()),
                slots.usage(Slots.Kind.RANKS, rankBudget.used(), rankBudget.max()),
                slots.usage(Slots.Kind.SPECS, specOnlyRuns().size(), settings.maxSpecs()));
    }

    private void publishCounts() {
        runCount.set(runs.size());
        gpuCount.set(gpus.size());
        agentCount.set(agents.size());
    }

    int runCount() {
        return runCount.get();
    }

    int gpuCount() {
        return gpuCount.get();
    }

    int agentCount() {
        return agentCount.get();
    }
}
