package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.detect.Detector;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.Samples;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Steps carried in an agent's batch ({@code run_steps}): applied as a steps request from that agent would apply them
 * (each step once, whatever is replayed or re-sent by either way), and the run judged once on the readings and the
 * steps together — where a batch and its own steps request made two judgements a second apart.
 */
class StepsInBatchTest {

    final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
    final double t0 = clock.millis() / 1000.0;
    final List<Double> judged = new ArrayList<>();
    final List<String> uuids = IntStream.range(0, EvaluationCost.GPUS)
            .mapToObj(g -> "GPU-0000000a-0000-4000-8000-00000000000" + g).toList();

    final Detector counting = EvaluationCadenceTest.counting(judged, t0);

    Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults(),
            List.of(counting));

    static List<StepEvent> steps(long from, long to, double ts) {
        List<StepEvent> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(Samples.withSource(StepEvent.of(s, 1.0, ts), "log-a"));
        }
        return out;
    }

    AgentBatch batch(long seq, List<StepEvent> steps) {
        double now = clock.millis() / 1000.0;
        AgentBatch b = EvaluationCost.batch(0, uuids, seq, now, seq);
        return new AgentBatch(b.host(), b.agentId(), b.seq(), b.gpus(), b.runs(), b.events(), b.health(),
                b.hostMemory(), b.sentAt(), steps == null ? null : List.of(new RunSteps("run-0", steps)));
    }

    static List<Long> numbers(List<StepEvent> steps) {
        return steps == null ? List.of() : steps.stream().map(StepEvent::step).toList();
    }

    @Test
    void eachStepCountsOnceWhateverIsReplayedOrSentTheOtherWay() {
        double now = clock.millis() / 1000.0;
        IngestResult first = fleet.ingestBatch(batch(1, steps(1, 3, now)));
        assertThat(first.duplicate()).isFalse();
        assertThat(numbers(first.stepsCounted().get("run-0"))).containsExactly(1L, 2L, 3L);
        assertThat(first.stepsRefused()).isNull();

        // The same batch again (its answer was lost): a replay, its steps with it.
        IngestResult replay = fleet.ingestBatch(batch(1, steps(1, 3, now)));
        assertThat(replay.duplicate()).isTrue();
        assertThat(replay.stepsCounted()).isEmpty();

        // A restarted agent reads the log again from before step 3: only what is new counts.
        clock.advanceSeconds(10);
        IngestResult reread = fleet.ingestBatch(batch(2, steps(2, 5, clock.millis() / 1000.0)));
        assertThat(numbers(reread.stepsCounted().get("run-0"))).containsExactly(4L, 5L);

        // The same steps in their own request (an agent that fell back to it) are not counted again either.
        assertThat(fleet.ingestSteps("run-0", steps(4, 6, clock.millis() / 1000.0), "agent-0", null))
                .extracting(StepEvent::step).containsExactly(6L);
        assertThat(fleet.run("run-0").orElseThrow().observed().lastStep()).isEqualTo(6L);
    }

    @Test
    void aBatchAndItsStepsAreJudgedOnceWhereABatchAndAStepsRequestAreJudgedTwice() {
        // Ten seconds of readings and steps per batch (--ship-every 10s), carried together: judged on arrival only
        // (before the second batch shows the run's cadence, the tick judges it 5 s after the first).
        long seq = 0;
        for (int s = 0; s < 40; s++) {
            if (s % 10 == 0) {
                fleet.ingestBatch(batch(++seq, steps(s + 1, s + 10, clock.millis() / 1000.0)));
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(judged).containsExactly(0.0, 5.0, 10.0, 20.0, 30.0);

        // The same with the steps in their own request right after the batch: the tick judges again for them.
        judged.clear();
        fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(), DetectorSettings.defaults(),
                List.of(counting));
        double start = clock.millis() / 1000.0 - t0;
        for (int s = 0; s < 20; s++) {
            if (s % 10 == 0) {
                fleet.ingestBatch(batch(++seq, null));
                clock.advanceSeconds(0.01);
                fleet.ingestSteps("run-0", steps(s + 1, s + 10, clock.millis() / 1000.0), "agent-0", null);
                clock.advanceSeconds(-0.01);
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        assertThat(judged.stream().map(t -> Math.round(t - start)).toList())
                .containsExactly(0L, 1L, 6L, 10L, 11L);
    }

    /**
     * A run on eight nodes whose agents send every 10 s, each at its own second: judged at most every 5 s on arriving
     * batches (not at each node's batch, up to once a second, on an eighth of its readings), and at once for an event.
     */
    @Test
    void aRunOnEightNodesSendingEveryTenSecondsIsJudgedEveryFiveSecondsAndAtOnceForAnEvent() {
        List<List<String>> uuids = new ArrayList<>();
        for (int node = 0; node < 8; node++) {
            int n = node;
            uuids.add(IntStream.range(0, EvaluationCost.GPUS)
                    .mapToObj(g -> String.format("GPU-%08x-0000-4000-8000-%012x", n, g)).toList());
        }
        long[] seq = new long[8];
        java.util.function.BiFunction<Integer, List<dev.trainwatch.protocol.AgentEvent>, AgentBatch> batchOf =
                (node, events) -> {
                    double now = clock.millis() / 1000.0;
                    AgentBatch b = EvaluationCost.batch(node, uuids.get(node), ++seq[node], now, seq[node]);
                    dev.trainwatch.protocol.RunAttribution r = b.runs().get(0);
                    return new AgentBatch(b.host(), b.agentId(), b.seq(), b.gpus(), List.of(
                            new dev.trainwatch.protocol.RunAttribution("big", r.pids(), r.gpuUuids(), r.ranks(),
                                    "10.0.0.1", null, null, null, null, null, null)), events, b.health(), b.hostMemory(), b.sentAt(), null);
                };
        for (int s = 0; s < 60; s++) {
            int node = s % 10;
            if (node < 8) {
                fleet.ingestBatch(batchOf.apply(node, List.of()));
            }
            fleet.tick();
            clock.advanceSeconds(1);
        }
        // Until each agent's second batch shows its gap, every second; then every 5 s.
        List<Double> late = judged.stream().filter(t -> t >= 20).toList();
        assertThat(late).containsExactly(22.0, 27.0, 32.0, 37.0, 42.0, 47.0, 52.0, 57.0);

        // 60 s, 3 s after the last judgement: a node's batch waits; half a second later an XID is judged at once.
        judged.clear();
        fleet.ingestBatch(batchOf.apply(1, List.of()));
        assertThat(judged).isEmpty();
        clock.advanceSeconds(0.5);
        fleet.ingestBatch(batchOf.apply(2, List.of(dev.trainwatch.protocol.AgentEvent.xid(clock.millis() / 1000.0,
                uuids.get(2).get(0), 79))));
        assertThat(judged).containsExactly(60.5);

        // A GPU at its power cap is no hurry; one slowed down in hardware is (its agent sends such polls at once).
        judged.clear();
        clock.advanceSeconds(0.5);
        fleet.ingestBatch(withReasons(batchOf.apply(3, List.of()), "sw_power_cap"));
        assertThat(judged).isEmpty();
        // Nor is an idle GPU under a power brake (some chassis assert it on idle GPUs; throttling does not count it).
        clock.advanceSeconds(0.25);
        fleet.ingestBatch(withReasons(batchOf.apply(5, List.of()), "hw_power_brake_slowdown", 0.02));
        assertThat(judged).isEmpty();
        clock.advanceSeconds(0.25);
        fleet.ingestBatch(withReasons(batchOf.apply(4, List.of()), "hw_thermal_slowdown"));
        assertThat(judged).containsExactly(61.5);
    }

    /** The batch with its first GPU reporting {@code reason}. */
    static AgentBatch withReasons(AgentBatch b, String reason) {
        return withReasons(b, reason, null);
    }

    /** The batch with its first GPU reporting {@code reason} at {@code utilization} (null: as it was). */
    static AgentBatch withReasons(AgentBatch b, String reason, Double utilization) {
        List<dev.trainwatch.protocol.GpuSample> gpus = new ArrayList<>(b.gpus());
        dev.trainwatch.protocol.GpuSample s = gpus.get(0);
        gpus.set(0, new dev.trainwatch.protocol.GpuSample(s.ts(), s.index(), s.uuid(), s.name(), s.pciBusId(),
                s.memoryTotalBytes(), s.memoryUsedBytes(), s.memoryReservedBytes(), s.memoryFreeBytes(),
                utilization != null ? utilization : s.utilizationRatio(), s.memoryUtilizationRatio(), s.utilizationWindow(), s.smClockHz(),
                s.smClockMaxHz(), s.memClockHz(), s.memClockMaxHz(), List.of(reason), s.powerWatts(),
                s.powerLimitWatts(), s.energyJoules(), s.temperatureCelsius(), s.pstate(), s.processes(), s.lost(),
                s.activity()));
        return new AgentBatch(b.host(), b.agentId(), b.seq(), gpus, b.runs(), b.events(), b.health(), b.hostMemory(),
                b.sentAt(), b.runSteps());
    }

    /** Issue #45: the batch used to be answered 200 with its steps dropped; now it is refused whole and sent again. */
    @Test
    void aRunWithoutRoomGetsTheWholeBatchRefusedAndTakenWhenSentAgainWithRoom() {
        FleetSettings d = FleetSettings.defaults();
        fleet = new Fleet(new FakePredictor(), clock, new FleetSettings(2, d.maxGpus(), d.maxAgents(), d.window(),
                d.gpuWindowEntries(), d.stepWindowEntries(), d.evaluateEvery(), d.anomalyHistory(),
                d.endedRunRetention()), DetectorSettings.defaults(), List.of(counting));
        double now = clock.millis() / 1000.0;
        fleet.ingestBatch(batch(1, steps(1, 2, now)));
        fleet.ingestSteps("blocker", steps(1, 2, now)); // the second slot, live
        AgentBatch other = batch(2, null);
        AgentBatch withSteps = new AgentBatch(other.host(), other.agentId(), other.seq(), other.gpus(), other.runs(),
                other.events(), other.health(), other.hostMemory(), other.sentAt(),
                List.of(new RunSteps("run-elsewhere", steps(1, 2, now))));
        assertThatThrownBy(() -> fleet.ingestBatch(withSteps)).isInstanceOfSatisfying(LimitReachedException.class,
                e -> assertThat(e.kind()).isEqualTo(Slots.Kind.RUNS));
        assertThat(fleet.run("run-elsewhere")).isEmpty();
        assertThat(fleet.agents()).singleElement().satisfies(a -> assertThat(a.batches()).as("nothing applied")
                .isEqualTo(1));

        fleet.endRun("blocker");
        IngestResult again = fleet.ingestBatch(withSteps); // the agent's spool sends it again
        assertThat(again.duplicate()).isFalse();
        assertThat(again.stepsRefused()).isNull();
        assertThat(again.stepsCounted()).containsKey("run-elsewhere");
        assertThat(fleet.agents()).singleElement().satisfies(a -> assertThat(a.batches()).isEqualTo(2));
    }
}
