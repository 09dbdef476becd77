package dev.trainwatch.collector.state;

import dev.trainwatch.collector.bench.HttpFleetLoad;
import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Detectors;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.StepEvent;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What judging the runs costs: a fleet of 128 runs on 128 nodes of 8 GPUs (the over-HTTP benchmark's fleet, the same
 * readings) fed in-process, one second at a time (a batch per node and a step report per run, the clock a second
 * on), with every detector and with none, and with none and no listener wanting the runs' summaries; the differences
 * per run and second are the detectors' share and the summaries' (built for a history every 2 s per run here).
 * The windows are filled with 11 minutes first, so every window a detector reads is full. Prints the calling
 * thread's CPU time. With {@code -Dship.every=10} (and {@code -Dship.spread=true}) each node sends 10 s of readings
 * and its run's steps in one batch every 10 s instead, as agents with {@code --ship-every 10s} do. A measurement
 * (docs/PERFORMANCE.md), not a test:
 *
 * <pre>
 * ./mvnw -B -o -q install -DskipTests
 * ./mvnw -B -o -q -pl collector exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-cp %classpath dev.trainwatch.collector.state.EvaluationCost 300"
 * # for a profiler: only the fleet with its detectors, round after round
 *   "-Dexec.args=-XX:+PreserveFramePointer -cp %classpath dev.trainwatch.collector.state.EvaluationCost 300 profile"
 * </pre>
 */
public final class EvaluationCost {

    static final int NODES = 128;
    static final int GPUS = 8;

    public static void main(String[] args) {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (args.length > 1 && args[1].equals("profile")) { // only the fleet with its detectors, for a profiler
            while (true) {
                System.out.printf("%.0f µs per second of the fleet%n",
                        cpuPerSecond(Detectors.all(DetectorSettings.defaults()), seconds, threads));
            }
        }
        for (int round = 0; round < 3; round++) {
            double with = cpuPerSecond(Detectors.all(DetectorSettings.defaults()), seconds, threads);
            double without = cpuPerSecond(List.of(), seconds, threads);
            double bare = cpuPerSecond(List.of(), seconds, threads, false);
            System.out.printf("round %d: %d runs, one second of the fleet with a listener wanting summaries (a"
                    + " history): %.0f µs with every detector, %.0f µs with none; %.0f µs with none and no summaries;"
                    + " per run and second the detectors %.1f µs (%.2f %% of a core), the summaries %.1f µs (%.2f %%)%n",
                    round, NODES, with, without, bare, (with - without) / NODES, (with - without) / 1e4,
                    (without - bare) / NODES, (without - bare) / 1e4);
        }
    }

    /** CPU µs of the calling thread per second of the fleet (ingest of every node's batch, steps, tick). */
    static double cpuPerSecond(List<Detector> detectors, int seconds, ThreadMXBean threads) {
        return cpuPerSecond(detectors, seconds, threads, true);
    }

    /**
     * @param summaries whether a listener wants the runs' summaries, as a collector's history does (without one,
     *                  none is built)
     */
    static double cpuPerSecond(List<Detector> detectors, int seconds, ThreadMXBean threads, boolean summaries) {
        SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
        Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(), DetectorSettings.defaults(),
                detectors);
        if (summaries) {
            fleet.addListener(new FleetListener() { });
        }
        List<List<String>> uuids = new ArrayList<>();
        for (int n = 0; n < NODES; n++) {
            List<String> node = new ArrayList<>();
            for (int g = 0; g < GPUS; g++) {
                node.add(String.format("GPU-%08x-0000-4000-8000-%012x", n, g));
            }
            uuids.add(node);
        }
        long[] seq = new long[NODES];
        int warm = 660;
        long start = 0;
        for (int s = 0; s < warm + seconds; s++) {
            if (s == warm) {
                start = threads.getCurrentThreadCpuTime();
            }
            double now = clock.millis() / 1000.0;
            for (int n = 0; n < NODES; n++) {
                if (SHIP_EVERY == 1) {
                    fleet.ingestBatch(batch(n, uuids.get(n), ++seq[n], now, s));
                    fleet.ingestSteps("run-" + n, List.of(StepEvent.of(s + 1, 1.0, now)));
                } else if (s % SHIP_EVERY == (SHIP_SPREAD ? n % SHIP_EVERY : SHIP_EVERY - 1)) {
                    fleet.ingestBatch(batchOfSeconds(n, uuids.get(n), ++seq[n], now, s));
                }
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        return (threads.getCurrentThreadCpuTime() - start) / 1e3 / seconds;
    }

    /**
     * {@code -Dship.every=N} (as {@code HttpFleetLoad}'s): each node sends every N seconds its last N seconds of
     * readings with its run's N step reports in the batch, as agents with {@code --ship-every} do;
     * {@code -Dship.spread=true} spreads the nodes over the N seconds.
     */
    static final int SHIP_EVERY = Math.max(1, Integer.getInteger("ship.every", 1));
    static final boolean SHIP_SPREAD = Boolean.getBoolean("ship.spread");

    /** A node's batch of its last {@link #SHIP_EVERY} seconds, newest at {@code now}, with the run's steps in it. */
    static AgentBatch batchOfSeconds(int node, List<String> uuids, long seq, double now, long second) {
        AgentBatch newest = batch(node, uuids, seq, now, second);
        List<dev.trainwatch.protocol.GpuSample> gpus = new ArrayList<>();
        List<StepEvent> steps = new ArrayList<>();
        for (int k = SHIP_EVERY - 1; k >= 0; k--) {
            gpus.addAll(HttpFleetLoad.samples(uuids, now - k, second - k, 85_899_345_920L));
            steps.add(StepEvent.of(second + 1 - k, 1.0, now - k));
        }
        return new AgentBatch(newest.host(), newest.agentId(), seq, gpus, newest.runs(), List.of(), newest.health(),
                null, now, List.of(new dev.trainwatch.protocol.RunSteps("run-" + node, steps)));
    }

    static AgentBatch batch(int node, List<String> uuids, long seq, double now, long second) {
        List<RankInfo> ranks = new ArrayList<>();
        for (int g = 0; g < GPUS; g++) {
            ranks.add(new RankInfo(10_000 + g, g, g, GPUS, List.of(uuids.get(g))));
        }
        RunAttribution run = new RunAttribution("run-" + node, ranks.stream().map(RankInfo::pid).toList(),
                List.copyOf(uuids), ranks, "10.0.0." + node, null, null, null, null, null, null);
        return new AgentBatch("node-" + node, "agent-" + node, seq,
                HttpFleetLoad.samples(uuids, now, second, 85_899_345_920L), List.of(run), List.of(),
                new AgentHealth(0.004, 0L, 0L, 0L, 0L, 1.0), null, now, null);
    }
}
