package dev.trainwatch.collector.metrics;

import static dev.trainwatch.collector.metrics.MetricNames.KIND;
import static dev.trainwatch.collector.metrics.MetricNames.RUN_ID;
import static dev.trainwatch.collector.metrics.MetricNames.SEVERITY;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.ComparisonView;
import dev.trainwatch.collector.state.ObservedView;
import dev.trainwatch.collector.state.RunView;
import dev.trainwatch.protocol.StepEvent;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@code trainwatch_run_*} series: gauges read from the fleet's run views at scrape time, the
 * {@code trainwatch_run_step_seconds} summary fed with every step report the fleet counts (one per step when
 * every rank logs it), and
 * {@code trainwatch_run_anomaly{kind,severity}}. Series of a run disappear when the fleet forgets the run.
 * Thread-safe.
 */
public final class RunMetrics implements MeterBinder {

    /** Quantiles of the step-time summary and the window they cover. */
    static final double[] STEP_QUANTILES = {0.5, 0.9};
    static final Duration STEP_WINDOW = Duration.ofMinutes(10);
    /** A report averaging more steps than this is recorded this many times (bounds the work per report). */
    static final int MAX_RECORDS_PER_REPORT = 1_000;

    private final Supplier<? extends Collection<RunView>> runs;
    private final List<GaugeFamily<String, RunView>> families = new ArrayList<>();
    private GaugeFamily<AnomalyKey, AnomalyState> anomalies;
    private final Map<String, DistributionSummary> stepSummaries = new HashMap<>();
    private MeterRegistry registry;

    /** @param runs the fleet's current run views, called once per refresh */
    public RunMetrics(Supplier<? extends Collection<RunView>> runs) {
        this.runs = runs;
    }

    private record AnomalyKey(String runId, String kind, String severity) {
    }

    private record AnomalyState(AnomalyKey key, boolean active) {
    }

    @Override
    public synchronized void bindTo(MeterRegistry meterRegistry) {
        this.registry = meterRegistry;
        observed(MetricNames.RUN_LAST_STEP, null, "Newest step number", ObservedView::lastStep);
        observed(MetricNames.RUN_LAST_STEP_TIMESTAMP, MetricNames.SECONDS, "Unix time of the newest step",
                ObservedView::lastStepTs);
        observed(MetricNames.RUN_DATA_WAIT, MetricNames.RATIO, "Share of step time spent waiting for data (0-1)",
                ObservedView::dataWaitRatio);
        observed(MetricNames.RUN_SAMPLES_PER_SECOND, null, "Observed throughput over all ranks, samples/s",
                ObservedView::samplesPerSecond);
        gauge(MetricNames.RUN_PREDICTED_STEP, MetricNames.SECONDS, "The estimator's seconds per step",
                RunMetrics::predictedStepSeconds);
        gauge(MetricNames.RUN_PREDICTED_PEAK_MEMORY, MetricNames.BYTES, "The estimator's peak device memory per GPU",
                RunMetrics::predictedPeakMemoryBytes);
        observed(MetricNames.RUN_PEAK_MEMORY, MetricNames.BYTES, "Observed peak device memory on the run's worst GPU",
                ObservedView::peakMemoryBytes);
        compared(MetricNames.RUN_STEP_TIME, MetricNames.RATIO, "Observed / predicted step time",
                ComparisonView::stepTimeRatio);
        compared(MetricNames.RUN_MEMORY_HEADROOM, MetricNames.BYTES, "Capacity minus used on the run's fullest GPU",
                ComparisonView::headroomBytes);
        compared(MetricNames.RUN_ETA, MetricNames.SECONDS, "Time to total_steps at the observed rate",
                ComparisonView::etaSeconds);
        observed(MetricNames.RUN_GPU_UTILIZATION, MetricNames.RATIO, "Mean utilisation over the run's GPUs (0-1)",
                ObservedView::gpuUtilizationRatio);
        gauge(MetricNames.RUN_GPUS, null, "GPUs attributed to the run",
                run -> run.observed() == null ? 0 : run.observed().gpuCount());
        gauge(MetricNames.RUN_ENDED, null, "1 once the run has ended", run -> run.ended() ? 1 : 0);
        anomalies = new GaugeFamily<>(registry, MetricNames.RUN_ANOMALY, null,
                "1 while the anomaly is active, 0 after",
                state -> Tags.of(RUN_ID, LabelValues.sanitize(state.key().runId()), KIND, state.key().kind(),
                        SEVERITY, state.key().severity()),
                state -> state.active() ? 1 : 0);
    }

    private void gauge(String name, String unit, String description, GaugeFamily.Reading<RunView> reading) {
        families.add(new GaugeFamily<>(registry, name, unit, description,
                run -> Tags.of(RUN_ID, LabelValues.sanitize(run.runId())), reading));
    }

    private void observed(String name, String unit, String description, Function<ObservedView, Number> field) {
        gauge(name, unit, description, run -> run.observed() == null ? null : field.apply(run.observed()));
    }

    private void compared(String name, String unit, String description, Function<ComparisonView, Number> field) {
        gauge(name, unit, description, run -> run.comparison() == null ? null : field.apply(run.comparison()));
    }

    private static Number predictedStepSeconds(RunView run) {
        if (run.comparison() != null && run.comparison().predictedStepSeconds() != null) {
            return run.comparison().predictedStepSeconds();
        }
        return run.estimate() == null ? null : run.estimate().stepSeconds();
    }

    private static Number predictedPeakMemoryBytes(RunView run) {
        if (run.comparison() != null && run.comparison().predictedPeakMemoryBytes() != null) {
            return run.comparison().predictedPeakMemoryBytes();
        }
        return run.estimate() == null ? null : run.estimate().peakMemoryBytes();
    }

    /**
     * Feeds accepted step reports of a run into its step-time summary. A report that averages
     * {@code interval_steps} steps counts as that many steps of its mean time, so count and sum stay in steps.
     */
    public synchronized void recordSteps(String runId, List<StepEvent> steps) {
        if (registry == null) {
            return;
        }
        DistributionSummary summary = stepSummaries.computeIfAbsent(runId, id -> DistributionSummary
                .builder(MetricNames.RUN_STEP)
                .baseUnit(MetricNames.SECONDS)
                .description("Observed seconds per step")
                .tags(RUN_ID, LabelValues.sanitize(id))
                .publishPercentiles(STEP_QUANTILES)
                .distributionStatisticExpiry(STEP_WINDOW)
                .distributionStatisticBufferLength(5)
                .register(registry));
        for (StepEvent step : steps) {
            int times = step.intervalSteps() == null ? 1 : Math.min(step.intervalSteps(), MAX_RECORDS_PER_REPORT);
            for (int i = 0; i < times; i++) {
                summary.record(step.timeS());
            }
        }
    }

    /** Brings every run series in line with the fleet's current views. */
    public synchronized void refresh() {
        if (registry == null) {
            return;
        }
        Map<String, RunView> snapshot = new LinkedHashMap<>();
        Map<AnomalyKey, AnomalyState> anomalyStates = new LinkedHashMap<>();
        for (RunView run : runs.get()) {
            snapshot.put(run.runId(), run);
            if (run.anomalies() == null) {
                continue;
            }
            for (Anomaly anomaly : run.anomalies()) {
                AnomalyKey key = new AnomalyKey(run.runId(), anomaly.kind().wireName(),
                        anomaly.severity().wireName());
                // An active anomaly wins over a resolved one of the same kind and severity in the history.
                anomalyStates.merge(key, new AnomalyState(key, anomaly.active()),
                        (a, b) -> a.active() ? a : b);
            }
        }
        for (GaugeFamily<String, RunView> family : families) {
            family.update(snapshot);
        }
        anomalies.update(anomalyStates);
        Set<String> present = snapshot.keySet();
        stepSummaries.entrySet().removeIf(entry -> {
            if (present.contains(entry.getKey())) {
                return false;
            }
            registry.remove(entry.getValue());
            return true;
        });
    }
}
