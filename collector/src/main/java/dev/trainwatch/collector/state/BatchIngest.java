package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.EventKind;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSteps;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Applies an agent's batch: liveness and de-duplication by {@code seq}, GPU samples, the node's memory, run
 * attribution and events. Only called under the {@link Fleet}'s lock.
 */
final class BatchIngest {
    /** Attribution entries per host that are believed (a node has at most a few dozen GPUs). */
    static final int MAX_GPUS_PER_HOST_PART = 64;

    private final Registry registry;
    private final EvaluationSchedule events;
    private final SpecBinding specs;
    /** Nodes sharing one agent id. */
    final AgentClones clones = new AgentClones();

    BatchIngest(Registry registry, EvaluationSchedule events, SpecBinding specs) {
        this.registry = registry;
        this.events = events;
        this.specs = specs;
    }

    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);
    /** A clock further off than this is worth one line (NTP keeps clocks within milliseconds). */
    static final double CLOCK_WARNING_SECONDS = 5;

    /**
     * The runs the batch touched go to {@code toJudge}, so the caller judges each run once on the whole request;
     * {@code wallOffset} moves the readings of an agent that sends no {@code sent_at} onto the fleet's clock.
     */
    IngestResult apply(AgentBatch batch, Double requestSentAt, double now, double wallOffset,
                       Set<RunState> toJudge) {
        // A second node under the same agent id (a cloned image) is an agent of its own: both nodes' data is kept.
        String agentKey = clones.keyFor(registry, batch.agentId(), batch.host(), now);
        AgentState agent = registry.agent(agentKey);
        // Applied before, by this collector or before its restart: exactly that batch, not every lower number.
        if (registry.ledger.applied(agentKey, batch.seq())) {
            if (agent != null) {
                agent.duplicates++;
            }
            return new IngestResult(true, gpuUuids(batch.gpus()).size());
        }
        registry.makeRoomFor(newGpus(batch), newRuns(batch), now); // may refuse: nothing applied yet
        if (agent == null) {
            agent = registry.newAgent(agentKey, now);
        }
        registry.agentHost(agent, batch.host());
        agent.lastSeq = batch.seq();
        registry.ledger.recordApplied(agentKey, batch.seq());
        double offset = clockOffset(agent, requestSentAt != null ? requestSentAt : batch.sentAt(),
                requestSentAt != null, now, wallOffset);
        double gap = now - agent.lastSeen;
        if (agent.batches > 0 && gap > 0) {
            agent.batchGap = gap;
        }
        agent.lastSeen = now;
        agent.lost = false;
        agent.batches++;
        if (batch.health() != null) {
            agent.health = batch.health();
        }
        Set<RunState> touched = new LinkedHashSet<>();
        applyReadings(batch, offset, now, touched);
        int gpus = gpuUuids(batch.gpus()).size();
        agent.gpuCount = gpus;
        if (batch.hostMemory() != null) {
            registry.hostMemoryOrCreate(batch.host()).add(batch.hostMemory(),
                    Timestamps.stamp(batch.hostMemory().ts() - offset, now));
        }
        if (batch.runs() != null) {
            for (RunAttribution a : batch.runs()) {
                if (a == null || a.runId() == null || a.runId().isBlank()) {
                    continue;
                }
                RunState run = attribute(a, batch.host(), now); // room was made above
                if (run != null) {
                    touched.add(run);
                }
            }
        }
        GpuProcesses.note(batch.gpus(), batch.runs(), registry, now);
        if (batch.events() != null) {
            for (AgentEvent e : batch.events()) {
                applyEvent(e, batch.host(), now, offset, touched);
            }
        }
        for (RunState run : touched) {
            run.touchedByBatch(agent.batchGap);
            if (!run.ended()) {
                toJudge.add(run);
            }
        }
        return new IngestResult(false, gpus);
    }

    /** The batch's GPU readings into their windows and their runs' accounting. */
    private void applyReadings(AgentBatch batch, double offset, double now, Set<RunState> touched) {
        if (batch.gpus() == null) {
            return;
        }
        for (GpuSample s : batch.gpus()) {
            if (s == null || s.uuid() == null || s.uuid().isBlank()) {
                continue;
            }
            GpuState g = registry.gpuOrCreate(s.uuid(), now); // room was made above
            double ts = Timestamps.stamp(s.ts() - offset, now);
            g.window.host(batch.host());
            g.window.add(s, ts);
            g.window.trim(now);
            g.latest = s;
            g.lastSeen = now;
            RunState run = g.runId == null ? null : registry.run(g.runId);
            if (run != null) {
                if (!run.ended()) {
                    run.accounting().gpuSample(s.uuid(), s, ts);
                }
                run.memoryUsed(s.memoryUsedBytes() != null && s.memoryUsedBytes() >= 0
                        ? s.memoryUsedBytes() : Double.NaN);
                touched.add(run);
            }
        }
    }

    /** The GPUs a batch names (readings and XID events), for the room check; the tracked ones are removed there. */
    private static Set<String> newGpus(AgentBatch batch) {
        Set<String> uuids = gpuUuids(batch.gpus());
        if (batch.events() != null) {
            for (AgentEvent e : batch.events()) {
                if (e != null && e.kind() != null && e.eventKind() == EventKind.XID
                        && e.xid() != null && e.gpuUuid() != null) {
                    uuids.add(e.gpuUuid());
                }
            }
        }
        return uuids;
    }

    /** The runs a batch names (attributions and steps), for the room check; the tracked ones are removed there. */
    private static Set<String> newRuns(AgentBatch batch) {
        Set<String> ids = new HashSet<>();
        if (batch.runs() != null) {
            for (RunAttribution a : batch.runs()) {
                if (a != null && a.runId() != null && !a.runId().isBlank()) {
                    ids.add(a.runId());
                }
            }
        }
        if (batch.runSteps() != null) {
            for (RunSteps group : batch.runSteps()) {
                if (group != null && group.runId() != null && group.steps() != null && !group.steps().isEmpty()) {
                    ids.add(group.runId());
                }
            }
        }
        return ids;
    }

    /** The distinct GPUs a batch holds readings of (an agent with --ship-every sends several of each). */
    private static Set<String> gpuUuids(List<GpuSample> readings) {
        Set<String> uuids = new HashSet<>();
        if (readings != null) {
            for (GpuSample s : readings) {
                if (s != null && s.uuid() != null && !s.uuid().isBlank()) {
                    uuids.add(s.uuid());
                }
            }
        }
        return uuids;
    }

    /**
     * The agent's clock offset after this batch, from {@code sentAt} (the request's when {@code ofRequest}, else
     * the batch's, or null); one line the first time it is beyond {@value #CLOCK_WARNING_SECONDS} s.
     */
    private static double clockOffset(AgentState agent, Double sentAt, boolean ofRequest, double now,
                                      double wallOffset) {
        if (sentAt != null && Double.isFinite(sentAt)) {
            if (ofRequest) {
                agent.clock.observeRequest(sentAt, now);
            } else {
                agent.clock.observe(sentAt, now);
            }
        }
        if (!agent.clock.known()) {
            return wallOffset;
        }
        double offset = agent.clock.seconds();
        if (!agent.warnedClock && Math.abs(offset) > CLOCK_WARNING_SECONDS) {
            agent.warnedClock = true;
            LOG.log(System.Logger.Level.WARNING, String.format(Locale.ROOT,
                    "agent %s on %s: its clock is %.1f s %s the collector's; its time stamps are corrected by that "
                            + "(check NTP on that node)", agent.agentId, agent.host, Math.abs(offset),
                    offset > 0 ? "ahead of" : "behind"));
        }
        return offset;
    }

    private RunState attribute(RunAttribution a, String host, double now) {
        RunState run = registry.runOrCreate(a.runId(), now);
        if (a.aliases() != null) {
            for (String alias : a.aliases()) {
                if (alias == null || alias.isBlank() || alias.equals(a.runId())) {
                    continue;
                }
                registry.alias(alias, a.runId());
                specs.adoptSpecOf(alias, run, now);
            }
        }
        RunState.HostPart part = run.hosts().computeIfAbsent(host, h -> new RunState.HostPart());
        Set<String> previous = Set.copyOf(part.gpuUuids);
        part.gpuUuids.clear();
        part.ranksByGpu.clear();
        if (a.gpuUuids() != null) {
            for (String uuid : a.gpuUuids()) {
                if (uuid != null && !uuid.isBlank() && part.gpuUuids.size() < MAX_GPUS_PER_HOST_PART) {
                    part.gpuUuids.add(uuid);
                }
            }
        }
        attributeRanks(part, a.ranks(), now);
        claimGpus(run, a.runId(), part, previous);
        run.seen(now);
        specs.maybeFillGpu(run);
        if (Boolean.TRUE.equals(a.ended())) {
            hostEnded(run, part, now);
            return null;
        }
        part.ended = false;
        if (run.ended()) {
            // The same run id is running again (e.g. a requeued Slurm job): reopen it.
            run.reopen();
            events.notifyChanged(run, now);
        }
        return run;
    }

    /** This host's part of the run ended: the run ends when every host's has. */
    private void hostEnded(RunState run, RunState.HostPart part, double now) {
        part.ended = true;
        if (!run.ended() && run.hosts().values().stream().allMatch(p -> p.ended)) {
            events.end(run, now);
        }
    }

    /** The ranks' processes on this host, and which GPUs each rank drives; ranks no longer reported go. */
    private static void attributeRanks(RunState.HostPart part, List<RankInfo> ranks, double now) {
        if (ranks == null) {
            return;
        }
        Set<Integer> reported = new HashSet<>();
        for (RankInfo r : ranks) {
            if (r == null || r.rank() == null) {
                continue;
            }
            reported.add(r.rank());
            if (part.procs.size() < MAX_GPUS_PER_HOST_PART || part.procs.containsKey(r.rank())) {
                RunState.RankProc p = part.procs.computeIfAbsent(r.rank(), k -> new RunState.RankProc());
                if (p.pid != r.pid()) {
                    p.readings.clear(); // another process now holds the rank (a restart): its CPU time starts again
                }
                p.pid = r.pid();
                p.gpuUuid = r.gpuUuids() != null && !r.gpuUuids().isEmpty() ? r.gpuUuids().get(0) : null;
                p.state = r.state();
                p.rss = r.rssBytes() != null ? r.rssBytes() : Double.NaN;
                p.workers = r.workers() != null ? r.workers() : -1;
                p.workersRss = r.workersRssBytes() != null ? r.workersRssBytes() : Double.NaN;
                p.ts = now;
                if (r.cpuSeconds() != null && Double.isFinite(r.cpuSeconds())) {
                    p.cpu(now, r.cpuSeconds());
                }
            }
            if (r.gpuUuids() == null) {
                continue;
            }
            for (String uuid : r.gpuUuids()) {
                if (part.gpuUuids.contains(uuid)) {
                    part.ranksByGpu.computeIfAbsent(uuid, u -> new ArrayList<>()).add(r.rank());
                }
            }
        }
        part.procs.keySet().retainAll(reported);
    }

    /** The GPUs this host gives the run now: those it no longer names leave it, new ones start its peak afresh. */
    private void claimGpus(RunState run, String runId, RunState.HostPart part, Set<String> previous) {
        for (String uuid : previous) {
            GpuState g = registry.gpu(uuid);
            if (g != null && runId.equals(g.runId) && !part.gpuUuids.contains(uuid)) {
                g.runId = null;
                run.accounting().gpuLeft(uuid);
            }
        }
        for (String uuid : part.gpuUuids) {
            GpuState g = registry.gpu(uuid);
            if (g != null) {
                if (!runId.equals(g.runId)) {
                    // A GPU newly given to this run: what an earlier run peaked at is not this run's peak.
                    g.window.restartPeak(WindowStats.latestMemory(g.window));
                }
                g.runId = runId;
                run.memoryUsed(g.window.peakMemory());
            }
        }
    }

    private void applyEvent(AgentEvent e, String host, double now, double offset, Set<RunState> touched) {
        if (e == null || e.kind() == null) {
            return;
        }
        switch (e.eventKind()) {
            case XID -> {
                if (e.xid() == null || e.gpuUuid() == null) {
                    return;
                }
                GpuState g = registry.gpu(e.gpuUuid());
                if (g == null) {
                    g = registry.gpuOrCreate(e.gpuUuid(), now);
                    if (g == null) {
                        return;
                    }
                    g.window.host(host);
                }
                g.addXid(new RunContext.XidRecord(Timestamps.stamp(e.ts() - offset, now), host, e.gpuUuid(), e.xid()));
                touchGpuRun(g, touched);
            }
            case GPU_LOST -> {
                GpuState g = registry.gpu(e.gpuUuid());
                if (g != null) {
                    g.window.markLost();
                    touchGpuRun(g, touched);
                }
            }
            case RUN_ENDED -> {
                RunState run = ownRun(e.runId(), host);
                if (run != null && e.ending() != null) {
                    run.recordEnding(e.ending());
                }
                if (run != null) {
                    hostEnded(run, run.hosts().get(host), now);
                }
            }
            case RUN_FAILED -> {
                RunState run = ownRun(e.runId(), host);
                if (run != null && e.failure() != null) {
                    events.fail(run, e.failure(), host, now);
                }
            }
            case PHASE -> {
                // A checkpoint, evaluation or sampling phase the run's log announced: its time is not a stall.
                RunState run = ownRun(e.runId(), host);
                if (run != null && !run.ended()) {
                    double ts = Timestamps.stamp(e.ts() - offset, now);
                    run.accounting().phase(e.message(), ts);
                    run.phase(e.message(), ts, e.progress());
                    touched.add(run);
                }
            }
            case OOM_SKIPPED -> {
                RunState run = ownRun(e.runId(), host);
                if (run != null && !run.ended()) {
                    run.oomSkipped(e.count(), Timestamps.stamp(e.ts() - offset, now));
                    touched.add(run);
                }
            }
            default -> {
                // ECC errors, read errors and kinds of newer agents: counted by the agent's own health, nothing to track
            }
        }
    }

    /** The run the GPU is attributed to, when tracked, is touched by the batch. */
    private void touchGpuRun(GpuState g, Set<RunState> touched) {
        RunState run = registry.run(g.runId);
        if (run != null) {
            touched.add(run);
        }
    }

    /**
     * The run an event of this host's agent may speak for: one the host attributed, or one on no node yet; so no
     * holder of the ingest token can end or fail another node's run.
     */
    private RunState ownRun(String runId, String host) {
        RunState run = registry.run(runId);
        if (run == null) {
            return null;
        }
        if (run.hosts().isEmpty()) {
            // On no node yet (a spec, or steps a script pushed): the first node to speak for it takes it.
            run.hosts().put(host, new RunState.HostPart());
            return run;
        }
        return run.hosts().containsKey(host) ? run : null;
    }
}
