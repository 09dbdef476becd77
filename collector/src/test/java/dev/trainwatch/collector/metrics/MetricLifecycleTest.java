package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.exposition.LabelValues;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;

/** Series follow the fleet: they appear, update, vanish with their GPU or run, and vanish when a reading does. */
class MetricLifecycleTest {

    private final ScrapeScenario scenario = new ScrapeScenario();
    private final MetricsExporter exporter = new MetricsExporter(() -> scenario.gpus, () -> scenario.runs,
            () -> scenario.agents, new SettableClock(Instant.ofEpochSecond((long) ScrapeScenario.NOW)), false);

    @Test
    void gpuSeriesFollowTheNewestSampleAndVanishWithTheGpu() {
        GpuView first = scenario.gpus.get(0);
        assertThat(exporter.scrape()).contains("trainwatch_gpu_memory_used_bytes{gpu=\"0\",gpu_uuid=\""
                + first.uuid() + "\",host=\"node-1\"} 6.2E10");

        GpuSample newer = Payloads.sample(ScrapeScenario.NOW, 0, first.uuid(), 70_000_000_000L, 0.5, List.of());
        scenario.gpus.set(0, new GpuView(first.uuid(), "node-1", first.runId(), newer, Map.of("79", 3L),
                ScrapeScenario.NOW, 0));
        String updated = exporter.scrape();
        assertThat(updated).contains("host=\"node-1\"} 7.0E10")
                .contains("kind=\"79\"} 3.0")
                .contains("gpu_uuid=\"" + first.uuid() + "\",host=\"node-1\",reason=\"sw_power_cap\"} 0.0");

        scenario.gpus.remove(0);
        String gone = exporter.scrape();
        assertThat(gone).doesNotContain(first.uuid());
    }

    @Test
    void aReadingThatBecomesAbsentLosesItsSeries() {
        GpuView first = scenario.gpus.get(0);
        GpuSample s = first.latest();
        GpuSample noTemperature = new GpuSample(s.ts(), s.index(), s.uuid(), s.name(), s.pciBusId(),
                s.memoryTotalBytes(), s.memoryUsedBytes(), null, null, s.utilizationRatio(), null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null);
        scenario.gpus.set(0, new GpuView(first.uuid(), first.host(), first.runId(), noTemperature, Map.of(),
                first.lastSeenTs(), 0));
        String scrape = exporter.scrape();
        assertThat(scrape.lines().filter(l -> l.startsWith("trainwatch_gpu_temperature_celsius{"))
                .filter(l -> l.contains(first.uuid()))).isEmpty();
        assertThat(scrape.lines().filter(l -> l.startsWith("trainwatch_gpu_memory_used_bytes{"))
                .filter(l -> l.contains(first.uuid()))).hasSize(1);
    }

    @Test
    void runSeriesAndTheStepSummaryVanishWithTheRun() {
        exporter.runs().onStepsApplied(ScrapeScenario.RUN, ScrapeScenario.steps());
        assertThat(exporter.scrape()).contains("trainwatch_run_step_seconds_count{run_id=\"pixart-sigma-run-1\"} 12")
                .contains("trainwatch_run_anomaly{kind=\"data_starvation\",run_id=\"pixart-sigma-run-1\"");
        scenario.runs.removeIf(run -> run.runId().equals(ScrapeScenario.RUN));
        String gone = exporter.scrape();
        assertThat(gone.lines().filter(l -> l.startsWith("trainwatch_run_"))
                .filter(l -> l.contains("run_id=\"pixart-sigma-run-1\""))).isEmpty();
        assertThat(gone).contains("trainwatch_run_ended{run_id=\"job:4711\"} 1.0");
    }

    @Test
    void runSeriesReadTheNewestViewAtEachScrape() {
        RunView run = scenario.runs.get(0);
        assertThat(exporter.scrape()).contains("trainwatch_run_last_step{run_id=\"pixart-sigma-run-1\"} 1200.0");
        ObservedView o = run.observed();
        ObservedView later = new ObservedView(o.peakMemoryBytes(), o.memoryUsedBytes(), o.memoryTotalBytes(),
                o.stepSeconds(), o.dataWaitRatio(), o.textEncoderRatio(), o.vaeRatio(), o.gpuUtilizationRatio(),
                o.samplesPerSecond(), 1_500L, o.lastStepTs(), o.largestBucketHeightPx(), o.largestBucketWidthPx(),
                o.gpuCount(), o.powerWatts(),
                null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);
        scenario.runs.set(0, new RunView(run.runId(), run.spec(), run.estimate(), later, run.comparison(),
                run.anomalies(), run.gpus(), run.hosts(), run.firstSeenTs(), run.lastSeenTs(), false, null, null,
                null, null, null, null));
        assertThat(exporter.scrape()).contains("trainwatch_run_last_step{run_id=\"pixart-sigma-run-1\"} 1500.0")
                .doesNotContain("trainwatch_run_last_step{run_id=\"pixart-sigma-run-1\"} 1200.0");
    }

    @Test
    void anActiveAnomalyWinsOverAResolvedOneOfTheSameKindAndSeverity() {
        RunView run = scenario.runs.get(0);
        Anomaly resolvedEarlier = new Anomaly(AnomalyKind.DATA_STARVATION, Severity.CRITICAL, false,
                ScrapeScenario.NOW - 3_000, ScrapeScenario.NOW - 2_000, "earlier", Map.of(), "fix");
        List<Anomaly> both = new ArrayList<>(run.anomalies());
        both.add(resolvedEarlier);
        scenario.runs.set(0, new RunView(run.runId(), run.spec(), run.estimate(), run.observed(), run.comparison(),
                both, run.gpus(), run.hosts(), run.firstSeenTs(), run.lastSeenTs(), false, null, null,
                null, null, null, null));
        List<String> starvation = exporter.scrape().lines()
                .filter(l -> l.startsWith("trainwatch_run_anomaly{kind=\"data_starvation\""))
                .filter(l -> l.contains("run_id=\"pixart-sigma-run-1\"")).toList();
        assertThat(starvation).hasSize(1);
        assertThat(starvation.get(0)).endsWith("} 1.0");
        assertThat(exporter.scrape()).contains(
                "trainwatch_run_anomaly{kind=\"throttling\",run_id=\"pixart-sigma-run-1\",severity=\"warning\"} 0.0");
    }

    @Test
    void aScrapeTakesTheRunViewsOnce() {
        // Taking the fleet's run views is the costly part of the run families; refresh and collect share them.
        java.util.concurrent.atomic.AtomicInteger taken = new java.util.concurrent.atomic.AtomicInteger();
        MetricsExporter counting = new MetricsExporter(() -> scenario.gpus, () -> {
            taken.incrementAndGet();
            return scenario.runs;
        }, () -> scenario.agents, new SettableClock(Instant.ofEpochSecond((long) ScrapeScenario.NOW)), false);
        counting.runs().onStepsApplied(ScrapeScenario.RUN, ScrapeScenario.steps());
        String scrape = counting.scrape();
        assertThat(scrape).contains("trainwatch_run_last_step{run_id=\"pixart-sigma-run-1\"}")
                .contains("trainwatch_run_step_seconds_count{run_id=\"pixart-sigma-run-1\"}");
        assertThat(taken.get()).isEqualTo(1);
    }

    @Test
    void labelValuesAreSanitisedAndCapped() {
        RunView run = scenario.runs.get(1);
        String hostile = "x\u0000\n\"" + "y".repeat(300);
        scenario.runs.set(1, new RunView(hostile, null, null, run.observed(), null, List.of(), List.of(), List.of(),
                run.firstSeenTs(), run.lastSeenTs(), true, run.endedAt(), null, null, null, null, null));
        String scrape = exporter.scrape();
        String line = scrape.lines().filter(l -> l.startsWith("trainwatch_run_ended{run_id=\"x")).findFirst()
                .orElseThrow();
        assertThat(line).startsWith("trainwatch_run_ended{run_id=\"x__\\\"yyy");
        PromLine.assertLabelValueAtMost(line, LabelValues.MAX_LENGTH + 1); // +1 for the escaping backslash
    }

    /** Helpers on one exposition line. */
    static final class PromLine {
        static void assertLabelValueAtMost(String line, int max) {
            String value = line.substring(line.indexOf("=\"") + 2, line.lastIndexOf("\"}"));
            assertThat(value.length()).isLessThanOrEqualTo(max);
        }
    }
}
