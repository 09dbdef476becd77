package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.ShipUrgency;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Plays a {@link Scenario} through a real {@link Fleet} with a hand-moved clock: one agent batch per second
 * (all GPUs), step reports as the phase says, {@code tick()} every second. Records every anomaly transition
 * with its time relative to the start of the fault phase. With {@code shipEvery} above 1 the readings and step
 * reports of that many seconds travel together, as {@code trainwatch agent --ship-every} sends them: the first
 * second alone, events and non-finite losses at once with what was held, what is held at the end last.
 */
final class ScenarioPlayer {

    static final String RUN = "run-1";
    static final long GIB = FakePredictor.GIB;
    static final long MAX_CLOCK = 1_410_000_000L;

    record Transition(double t, AnomalyKind kind, Severity severity, boolean raised, String message,
                      String suggestion, Anomaly anomaly) {
    }

    record Result(List<Transition> transitions, double faultStartT, double endT, Fleet fleet) {

        List<Transition> raised(AnomalyKind kind) {
            return transitions.stream().filter(t -> t.raised() && t.kind() == kind).toList();
        }

        /** Seconds from the start of the fault phase to the first raise of {@code kind}; NaN when never. */
        double latency(AnomalyKind kind) {
            return raised(kind).stream().mapToDouble(t -> t.t() - faultStartT).findFirst().orElse(Double.NaN);
        }

        List<AnomalyKind> kindsRaised() {
            return transitions.stream().filter(Transition::raised).map(Transition::kind).distinct().toList();
        }
    }

    private final FakePredictor predictor = new FakePredictor();
    private final DetectorSettings settings;
    private final int shipEvery;
    private final int nodes;

    ScenarioPlayer() {
        this(DetectorSettings.defaults());
    }

    ScenarioPlayer(DetectorSettings settings) {
        this(settings, 1);
    }

    /** Sends {@code shipEvery} seconds of readings and step reports per batch. */
    ScenarioPlayer(int shipEvery) {
        this(DetectorSettings.defaults(), shipEvery);
    }

    /**
     * The run's GPUs split over {@code nodes} nodes (GPU order, as even as they go), each with its own agent sending
     * {@code shipEvery} seconds per batch, the nodes' batches spread over those seconds; the log (its steps and the
     * phases it announces) is read on the first node, as on a real job whose rank 0 writes it.
     */
    ScenarioPlayer(int shipEvery, int nodes) {
        this(DetectorSettings.defaults(), shipEvery, nodes);
    }

    private ScenarioPlayer(DetectorSettings settings, int shipEvery) {
        this(settings, shipEvery, 1);
    }

    private ScenarioPlayer(DetectorSettings settings, int shipEvery, int nodes) {
        if (nodes < 1) {
            throw new IllegalArgumentException("nodes: " + nodes);
        }
        this.settings = settings;
        this.shipEvery = shipEvery;
        this.nodes = nodes;
        // FLOPs per sample such that the healthy PixArt-Sigma trace (batch 32 on 4 GPUs, 4.1 s steps) runs at about
        // 55% of the A100's bf16 peak, near the 62% tensor activity its counters show.
        predictor.hardwareFlopsPerSample = 2.2e13;
    }

    Result play(Scenario scenario) {
        if (scenario.hardwareFlopsPerSample() != null) {
            predictor.hardwareFlopsPerSample = scenario.hardwareFlopsPerSample();
        }
        SettableClock clock = new SettableClock(Instant.parse("2026-03-01T12:00:00Z"));
        Fleet fleet = new Fleet(predictor, clock, FleetSettings.defaults(), settings);
        double start = clock.seconds();
        List<Transition> transitions = new ArrayList<>();
        fleet.addListener(new FleetListener() {
            @Override
            public void onAnomalyRaised(String runId, Anomaly a) {
                transitions.add(new Transition(clock.seconds() - start, a.kind(), a.severity(), true, a.message(),
                        a.suggestion(), a));
            }

            @Override
            public void onAnomalyResolved(String runId, Anomaly a) {
                transitions.add(new Transition(clock.seconds() - start, a.kind(), a.severity(), false,
                        a.message(), a.suggestion(), a));
            }
        });
        if (scenario.spec() != null) {
            fleet.putSpec(RUN, scenario.spec());
        }
        List<String> uuids = new ArrayList<>();
        for (int i = 0; i < scenario.gpus(); i++) {
            uuids.add("GPU-" + i);
        }
        int nodeCount = Math.min(nodes, scenario.gpus());
        List<Held> held = new ArrayList<>();
        int[] nodeOf = new int[scenario.gpus()];
        for (int n = 0; n < nodeCount; n++) {
            int from = n * scenario.gpus() / nodeCount;
            int to = (n + 1) * scenario.gpus() / nodeCount;
            for (int g = from; g < to; g++) {
                nodeOf[g] = n;
            }
            // Node n's batches leave n/nodes of the interval after the first node's.
            held.add(new Held(fleet, n, uuids.subList(from, to), from, n * shipEvery / nodeCount, shipEvery));
        }
        double t = 0;
        double faultStart = Double.NaN;
        long step = 0;
        double[] cpu = new double[scenario.gpus()];
        double[] nvlink = new double[scenario.gpus()]; // each GPU's NVLink byte counter
        for (Scenario.Phase p : scenario.phases()) {
            if (Boolean.TRUE.equals(p.fault()) && Double.isNaN(faultStart)) {
                faultStart = t;
            }
            boolean announced = p.announce() == null;
            double nextStep = t + (p.steps() != null ? p.steps().everyS() : Double.POSITIVE_INFINITY);
            int jitter = 0;
            int cycle = 0;
            for (double pt = 0; pt < p.durationS(); pt += 1) {
                clock.advanceSeconds(1);
                t += 1;
                double now = clock.seconds();
                // Steps the log prints this second (read on the first node with the second's poll).
                List<StepEvent> read = List.of();
                if (p.steps() != null && t >= nextStep) {
                    Scenario.Steps s = p.steps();
                    int interval = s.intervalSteps() != null ? s.intervalSteps() : 1;
                    step += interval;
                    double time = s.timeS();
                    if (s.timeJitter() != null) {
                        time += (jitter++ % 2 == 0 ? 1 : -1) * s.timeJitter();
                    }
                    Double cycledData = null;
                    if (s.dataTimeCycle() != null && !s.dataTimeCycle().isEmpty()) {
                        cycledData = s.dataTimeCycle().get(cycle++ % s.dataTimeCycle().size());
                        time += cycledData - (s.dataTimeS() != null ? s.dataTimeS() : 0);
                    }
                    List<StepEvent> reports = new ArrayList<>();
                    int ranks = s.ranks() != null ? s.ranks() : 0;
                    for (int r = 0; r < Math.max(1, ranks); r++) {
                        if (s.silentRanks() != null && s.silentRanks().contains(r)) {
                            continue;
                        }
                        double factor = ranks > 0 && s.rankFactor() != null
                                ? s.rankFactor().getOrDefault(Integer.toString(r), 1.0) : 1.0;
                        Integer bh = s.bucket() != null ? s.bucket().get(0) : null;
                        Integer bw = s.bucket() != null ? s.bucket().get(1) : null;
                        Double baseData = cycledData != null ? cycledData : s.dataTimeS();
                        Double data = ranks > 0 && s.rankDataTimeS() != null
                                ? s.rankDataTimeS().getOrDefault(Integer.toString(r), baseData) : baseData;
                        reports.add(new StepEvent(step, time * factor, data, null, s.lmTimeS(), s.vaeTimeS(),
                                interval, s.samples(), s.loss() != null ? s.loss() : 0.1, 1e-4, 1.0, bh, bw,
                                ranks > 0 ? r : null, now, null));
                    }
                    read = reports;
                    nextStep += s.everyS();
                }
                if (!Boolean.TRUE.equals(p.agentSilent())) {
                    List<List<GpuSample>> samples = new ArrayList<>();
                    List<List<AgentEvent>> events = new ArrayList<>();
                    List<List<dev.trainwatch.protocol.RankInfo>> ranks = new ArrayList<>();
                    for (int n = 0; n < nodeCount; n++) {
                        samples.add(new ArrayList<>());
                        events.add(new ArrayList<>());
                        ranks.add(new ArrayList<>());
                    }
                    for (int g = 0; g < scenario.gpus(); g++) {
                        samples.get(nodeOf[g]).add(sample(p, g, uuids.get(g), now, (pt + 1) / p.durationS(), nvlink));
                    }
                    if (!announced) {
                        events.get(0).add(new AgentEvent(now, "phase", null, null, RUN, p.announce(), null, null, null, null));
                        announced = true;
                    }
                    if (p.xids() != null) {
                        for (Scenario.Xid x : p.xids()) {
                            if (x.atS() == pt) {
                                events.get(nodeOf[x.gpu()]).add(AgentEvent.xid(now, uuids.get(x.gpu()), x.xid()));
                            }
                        }
                    }
                    for (int r = 0; r < uuids.size(); r++) {
                        Scenario.RankProc rp = p.rankProcs() != null ? p.rankProcs().get(Integer.toString(r)) : null;
                        String state = rp != null && rp.state() != null ? rp.state() : "R";
                        cpu[r] += rp != null && rp.cpuRate() != null ? rp.cpuRate() : 1.0;
                        ranks.get(nodeOf[r]).add(new dev.trainwatch.protocol.RankInfo(100L + r, r,
                                r - held.get(nodeOf[r]).firstGpu, uuids.size(), List.of(uuids.get(r)), state, cpu[r],
                                6L * GIB, 4, 8L * GIB, 4.0 * t));
                    }
                    dev.trainwatch.protocol.HostMemory host = null;
                    if (p.hostMemGib() != null) {
                        double total = p.hostTotalGib() != null ? p.hostTotalGib() : 512;
                        double avail = p.hostMemGib().get(0)
                                + (p.hostMemGib().get(1) - p.hostMemGib().get(0)) * (pt + 1) / p.durationS();
                        long shmTotal = 64L * GIB;
                        host = new dev.trainwatch.protocol.HostMemory(now, (long) (total * GIB), (long) (avail * GIB),
                                0L, shmTotal, (long) (shmTotal * (p.shmUsedRatio() != null ? p.shmUsedRatio() : 0.1)));
                    }
                    for (int n = 0; n < nodeCount; n++) {
                        held.get(n).poll(samples.get(n), ranks.get(n), events.get(n), host, n == 0 ? read : List.of());
                    }
                } else {
                    held.forEach(Held::flush); // an agent that falls silent sent what it held before
                    if (!read.isEmpty()) {
                        fleet.ingestSteps(RUN, read); // pushed by the script itself, with no agent polling
                    }
                }
                for (Held node : held) {
                    if (node.polls >= shipEvery - node.firstBatchShorter || node.urgent) {
                        node.flush();
                    }
                }
                fleet.tick();
            }
        }
        held.forEach(Held::flush);
        return new Result(transitions, faultStart, t, fleet);
    }

    /** What the agent holds until its next batch (nothing for longer than one poll when shipEvery is 1). */
    private static final class Held {
        final Fleet fleet;
        final int node;
        final List<String> uuids;
        /** The global index of this node's first GPU (and rank). */
        final int firstGpu;
        /** Polls fewer in this node's first full batch: what spreads the nodes' batches over the interval. */
        int firstBatchShorter;
        final List<GpuSample> samples = new ArrayList<>();
        final List<AgentEvent> events = new ArrayList<>();
        final List<StepEvent> steps = new ArrayList<>();
        List<dev.trainwatch.protocol.RankInfo> ranks = List.of();
        dev.trainwatch.protocol.HostMemory host;
        int polls;
        boolean urgent;
        boolean sentOnce;
        final ShipUrgency urgency;
        long seq;

        Held(Fleet fleet, int node, List<String> uuids, int firstGpu, int firstBatchShorter, int shipEvery) {
            this.fleet = fleet;
            this.node = node;
            this.uuids = uuids;
            this.firstGpu = firstGpu;
            this.firstBatchShorter = firstBatchShorter;
            this.urgency = new ShipUrgency(1_000_000_000L, shipEvery > 1); // polls are 1 s apart
        }

        void poll(List<GpuSample> polled, List<dev.trainwatch.protocol.RankInfo> polledRanks,
                  List<AgentEvent> polledEvents, dev.trainwatch.protocol.HostMemory polledHost, List<StepEvent> read) {
            samples.addAll(polled);
            events.addAll(polledEvents);
            steps.addAll(read);
            ranks = polledRanks;
            if (polledHost != null) {
                host = polledHost;
            }
            polls++;
            // As the agent: its first poll, events, and what the agent's ShipUrgency finds go at once.
            boolean urgentReadings = urgency.urgent(polled, read);
            urgent |= urgentReadings || !polledEvents.isEmpty() || !sentOnce;
        }

        void flush() {
            boolean stepsInBatch = polls > 0 && !steps.isEmpty();
            if (polls > 0) {
                // The steps travel in the batch, as an agent sends them to a collector that takes them there.
                fleet.ingestBatch(new AgentBatch("node-" + (node + 1), "agent-" + (node + 1), ++seq,
                        List.copyOf(samples), List.of(new RunAttribution(RUN, List.of(100L + firstGpu), uuids, ranks,
                                null, false, null, null, null, null, null)), List.copyOf(events), new AgentHealth(0.003, 0L, 0L, 0L, 0L, 1.0), host,
                        null, stepsInBatch ? List.of(new dev.trainwatch.protocol.RunSteps(RUN, List.copyOf(steps)))
                                : null));
                if (sentOnce && polls > 0 && !urgent) {
                    firstBatchShorter = 0; // the first full batch after the first poll has gone
                }
                sentOnce = true;
            }
            if (!steps.isEmpty() && !stepsInBatch) {
                fleet.ingestSteps(RUN, List.copyOf(steps));
            }
            samples.clear();
            events.clear();
            steps.clear();
            host = null;
            polls = 0;
            urgent = false;
        }
    }

    private static GpuSample sample(Scenario.Phase p, int g, String uuid, double now, double progress,
                                    double[] nvlink) {
        Scenario.GpuOverride o = p.gpuOverrides() != null ? p.gpuOverrides().get(Integer.toString(g)) : null;
        List<Double> mem = o != null && o.memoryGib() != null ? o.memoryGib() : p.memoryGib();
        double memGib = mem.get(0) + (mem.get(1) - mem.get(0)) * progress;
        double util = pick(o != null ? o.utilization() : null, p.utilization(), 0.95);
        double utilMin = pick(o != null ? o.utilMin() : null, p.utilMin(), util);
        double idle = pick(o != null ? o.idleFraction() : null, p.idleFraction(), util <= 0.05 ? 1 : 0);
        double clockRatio = pick(o != null ? o.smClockRatio() : null, p.smClockRatio(), 1.0);
        List<String> reasons = o != null && o.reasons() != null ? o.reasons()
                : p.reasons() != null ? p.reasons() : List.of();
        double temp = pick(o != null ? o.temperature() : null, p.temperature(), 65.0);
        long used = (long) (memGib * GIB);
        return new GpuSample(now, g, uuid, "NVIDIA A100-SXM4-80GB", null, FakePredictor.A100_80GB, used, null,
                FakePredictor.A100_80GB - used, util, null,
                new UtilizationWindow(6, utilMin, util, Math.min(1, util + 0.02), idle, now - 1, now),
                (long) (MAX_CLOCK * clockRatio), MAX_CLOCK, null, null, reasons,
                o != null && o.power() != null ? o.power() : p.power() != null ? p.power() : 350.0, 400.0, null, temp, 0,
                List.of(), false, activity(o != null && o.activity() != null ? o.activity() : p.activity(), g, nvlink,
                now));
    }

    /** The counters of one second: the ratios as given, NVLink as cumulative bytes split evenly between rx and tx. */
    private static dev.trainwatch.protocol.GpuActivity activity(Scenario.Activity a, int g, double[] nvlink,
                                                                double now) {
        if (a == null) {
            return null;
        }
        if (a.dipEveryS() != null && a.dipS() != null && a.dipSm() != null && now % a.dipEveryS() < a.dipS()) {
            double scale = a.sm() != null && a.sm() > 0 ? a.dipSm() / a.sm() : 0;
            a = new Scenario.Activity(a.dipSm(), a.tensor() == null ? null : a.tensor() * scale, a.dram(),
                    a.nvlinkGbps(), null, null, null);
        }
        Long rx = null;
        Long tx = null;
        if (a.nvlinkGbps() != null) {
            nvlink[g] += a.nvlinkGbps() * 1e9;
            rx = (long) (nvlink[g] / 2);
            tx = (long) (nvlink[g] / 2);
        }
        return new dev.trainwatch.protocol.GpuActivity(1.0, a.sm(), null, a.tensor(), a.tensor(), a.dram(), null, null,
                null, null, rx, tx);
    }

    private static double pick(Double a, Double b, double fallback) {
        return a != null ? a : b != null ? b : fallback;
    }

    /** Rank r runs on GPU r, as torchrun places one rank per GPU of a node. */
    private static List<dev.trainwatch.protocol.RankInfo> ranksOnGpus(List<String> uuids) {
        List<dev.trainwatch.protocol.RankInfo> out = new ArrayList<>();
        for (int r = 0; r < uuids.size(); r++) {
            out.add(new dev.trainwatch.protocol.RankInfo(100L + r, r, r, uuids.size(), List.of(uuids.get(r))));
        }
        return out;
    }
}
