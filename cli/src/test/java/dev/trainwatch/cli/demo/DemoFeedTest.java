package dev.trainwatch.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DemoFeedTest {

    private static final Instant START = Instant.parse("2026-11-22T08:00:00Z");
    /** Built once: loading the catalogs is the slow part of a test here. */
    private static final Estimator ESTIMATOR = Estimator.bundled();

    /** Keeps what the feed sent, as the collector would receive it. */
    static final class RecordingSink implements DemoSink {
        final Map<String, RunSpec> specs = new LinkedHashMap<>();
        final Map<String, List<StepEvent>> steps = new LinkedHashMap<>();
        final List<AgentBatch> batches = new ArrayList<>();

        @Override
        public void putSpec(String runId, RunSpec spec) {
            specs.put(runId, spec);
        }

        @Override
        public void postSteps(String runId, List<StepEvent> events) {
            steps.computeIfAbsent(runId, k -> new ArrayList<>()).addAll(events);
        }

        @Override
        public void postBatch(AgentBatch batch) {
            batches.add(batch);
        }

        List<GpuSample> samplesOf(String host, int gpu) {
            return batches.stream().filter(b -> b.host().equals(host)).flatMap(b -> b.gpus().stream())
                    .filter(g -> g.index() == gpu).toList();
        }
    }

    private static RecordingSink play(double speed, int seconds, int tickSeconds) throws Exception {
        RecordingSink sink = new RecordingSink();
        DemoFeed feed = new DemoFeed(Scenario.bundled(ESTIMATOR), sink, speed, START);
        feed.begin();
        for (int t = tickSeconds; t <= seconds; t += tickSeconds) {
            feed.tick(START.plus(Duration.ofSeconds(t)));
        }
        return sink;
    }

    @Test
    void declaresFiveSyntheticRunsWithSpecsTheEstimatorKnows() throws Exception {
        RecordingSink sink = play(1, 0, 1);
        assertThat(sink.specs).containsOnlyKeys(HealthyDitScenario.RUN_ID, StarvedPixArtSigmaScenario.RUN_ID,
                CreepingSanaScenario.RUN_ID, ThrottledStragglerScenario.RUN_ID, FluxLoraScenario.RUN_ID);
        assertThat(sink.specs.get(FluxLoraScenario.RUN_ID).baseWeights()).isEqualTo("fp8");
        assertThat(sink.specs.keySet()).allMatch(id -> id.startsWith("demo-"));
        assertThat(sink.specs.get(StarvedPixArtSigmaScenario.RUN_ID).features()).isEqualTo("online");
        assertThat(sink.specs.get(ThrottledStragglerScenario.RUN_ID).gpus()).isEqualTo(8);
        assertThat(Scenario.bundled(ESTIMATOR)).allMatch(s -> s.title().startsWith("synthetic (demo)"));
    }

    @Test
    void everyNodeReportsEveryGpuOnEveryTickWithIncreasingSequence() throws Exception {
        RecordingSink sink = play(1, 10, 1);
        assertThat(sink.batches).hasSize(50);
        AgentBatch straggler = sink.batches.stream().filter(b -> b.runs().get(0).runId()
                .equals(ThrottledStragglerScenario.RUN_ID)).reduce((a, b) -> b).orElseThrow();
        assertThat(straggler.gpus()).hasSize(8);
        assertThat(straggler.seq()).isEqualTo(10);
        assertThat(straggler.runs().get(0).gpuUuids()).containsExactlyElementsOf(
                straggler.gpus().stream().map(GpuSample::uuid).toList());
        assertThat(straggler.gpus()).allMatch(g -> g.memoryUsedBytes() < g.memoryTotalBytes());
        assertThat(straggler.gpus().get(0).ts()).isEqualTo(START.getEpochSecond() + 10.0);
    }

    @Test
    void healthyDitRunsAsPredicted() throws Exception {
        RecordingSink sink = play(1, 60, 1);
        Expectation expected = Expectation.of(ESTIMATOR,
                sink.specs.get(HealthyDitScenario.RUN_ID), null);
        List<StepEvent> steps = sink.steps.get(HealthyDitScenario.RUN_ID);
        assertThat(steps).isNotEmpty();
        double mean = steps.stream().mapToDouble(StepEvent::timeS).average().orElseThrow();
        if (expected != null) {
            assertThat(mean / expected.stepSeconds()).isBetween(0.95, 1.05);
        }
        assertThat(steps).allMatch(s -> s.dataTimeS() / s.timeS() < 0.05);
        assertThat(sink.samplesOf("synthetic-demo-node-1", 0)).allMatch(g -> g.clockEventReasons().isEmpty()
                && g.utilizationWindow().idleFraction() == 0.0);
    }

    @Test
    void theFluxLoraFitsItsTwentyFourGigabytesAndRunsAsPredicted() throws Exception {
        RecordingSink sink = play(1, 60, 1);
        RunSpec spec = sink.specs.get(FluxLoraScenario.RUN_ID);
        Estimate estimate = ESTIMATOR.estimate(spec);
        assertThat(estimate.fits()).isTrue();
        List<StepEvent> steps = sink.steps.get(FluxLoraScenario.RUN_ID);
        assertThat(steps).isNotEmpty();
        double mean = steps.stream().mapToDouble(StepEvent::timeS).average().orElseThrow();
        assertThat(mean / estimate.stepSeconds()).isBetween(0.95, 1.05);
        assertThat(sink.samplesOf("synthetic-demo-node-5", 0)).allMatch(g -> g.memoryUsedBytes() < g.memoryTotalBytes()
                && g.name().equals("NVIDIA GeForce RTX 4090"));
    }

    @Test
    void pixartSigmaSpendsMostOfEachStepWaitingForDataWithTheGpuIdle() throws Exception {
        RecordingSink sink = play(1, 60, 1);
        List<StepEvent> steps = sink.steps.get(StarvedPixArtSigmaScenario.RUN_ID);
        assertThat(steps).isNotEmpty().allMatch(s -> s.dataTimeS() / s.timeS() > 0.5);
        assertThat(sink.samplesOf("synthetic-demo-node-2", 0))
                .allMatch(g -> g.utilizationWindow().idleFraction() > 0.4 && g.utilizationWindow().meanRatio() < 0.5);
    }

    @Test
    void sanaMemoryCreepsFromThePredictionToJustUnderCapacity() throws Exception {
        RecordingSink sink = play(1, 90, 1);
        List<GpuSample> samples = sink.samplesOf("synthetic-demo-node-3", 0);
        for (int i = 1; i < samples.size(); i++) {
            assertThat(samples.get(i).memoryUsedBytes()).isGreaterThanOrEqualTo(samples.get(i - 1).memoryUsedBytes());
        }
        GpuSample last = samples.get(samples.size() - 1);
        assertThat((double) last.memoryUsedBytes() / last.memoryTotalBytes()).isGreaterThan(0.95).isLessThan(1.0);
        assertThat((double) samples.get(0).memoryUsedBytes() / last.memoryTotalBytes()).isLessThan(0.8);
    }

    @Test
    void oneOfEightGpusThrottlesAndTheRunSlowsByTheClockRatio() throws Exception {
        RecordingSink sink = play(1, 40, 1);
        List<GpuSample> straggler = sink.samplesOf("synthetic-demo-node-4", ThrottledStragglerScenario.STRAGGLER);
        List<GpuSample> peer = sink.samplesOf("synthetic-demo-node-4", 0);
        GpuSample late = straggler.get(straggler.size() - 1);
        assertThat(late.clockEventReasons()).contains("hw_thermal_slowdown");
        assertThat(late.smClockHz()).isLessThan(peer.get(peer.size() - 1).smClockHz());
        assertThat(late.temperatureCelsius()).isGreaterThan(85);
        assertThat(straggler.get(0).clockEventReasons()).isEmpty();
        List<StepEvent> steps = sink.steps.get(ThrottledStragglerScenario.RUN_ID);
        Expectation expected = Expectation.of(ESTIMATOR, sink.specs.get(ThrottledStragglerScenario.RUN_ID),
                new Expectation(1, 5.1, 1));
        double lateStep = steps.get(steps.size() - 1).timeS();
        assertThat(lateStep / expected.stepSeconds()).isBetween(1.3, 1.5);
    }

    @Test
    void stepsDoNotDependOnHowOftenTheFeedTicks() throws Exception {
        List<StepEvent> everySecond = play(1, 30, 1).steps.get(CreepingSanaScenario.RUN_ID);
        List<StepEvent> everyFiveSeconds = play(1, 30, 5).steps.get(CreepingSanaScenario.RUN_ID);
        assertThat(everyFiveSeconds).isEqualTo(everySecond);
        assertThat(everySecond.get(0).step()).isEqualTo(21_950L);
        for (int i = 1; i < everySecond.size(); i++) {
            assertThat(everySecond.get(i).step()).isEqualTo(everySecond.get(i - 1).step() + 1);
            assertThat(everySecond.get(i).ts()).isGreaterThan(everySecond.get(i - 1).ts());
        }
    }

    @Test
    void speedCompressesTheStoryButNotTheReportedStepTimes() throws Exception {
        RecordingSink fast = play(10, 10, 1);
        RecordingSink slow = play(1, 100, 1);
        assertThat(fast.steps.get(CreepingSanaScenario.RUN_ID)).hasSameSizeAs(slow.steps.get(CreepingSanaScenario.RUN_ID));
        List<GpuSample> fastSana = fast.samplesOf("synthetic-demo-node-3", 0);
        assertThat((double) fastSana.get(fastSana.size() - 1).memoryUsedBytes()
                / fastSana.get(0).memoryTotalBytes()).isGreaterThan(0.95);
    }

    @Test
    void aVeryFastFeedReportsMeansInsteadOfFloodingTheCollector() throws Exception {
        RecordingSink sink = play(50, 5, 5);
        assertThat(sink.steps.get(HealthyDitScenario.RUN_ID)).hasSize(1)
                .allMatch(s -> s.intervalSteps() > DemoFeed.MAX_STEP_EVENTS_PER_TICK);
    }

    @Test
    void refusesASpeedThatIsNotAPositiveNumber() {
        assertThatThrownBy(() -> new DemoFeed(List.of(), new RecordingSink(), 0, START))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("speed");
        assertThatThrownBy(() -> new DemoFeed(List.of(), new RecordingSink(), Double.NaN, START))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void batchesAreValidWireJson() throws Exception {
        RecordingSink sink = play(1, 2, 1);
        String json = Json.MAPPER.writeValueAsString(sink.batches.get(0));
        assertThat(json).contains("\"agent_id\"", "\"memory_used_bytes\"", "\"utilization_window\"", "\"run_id\"");
        AgentBatch back = Json.MAPPER.readValue(json, AgentBatch.class);
        assertThat(back).isEqualTo(sink.batches.get(0));
    }
}
