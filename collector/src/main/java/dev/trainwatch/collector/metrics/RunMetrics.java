package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.view.ComparisonView;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.exposition.LabelValues;
import dev.trainwatch.exposition.Labelled;
import dev.trainwatch.protocol.StepEvent;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import static dev.trainwatch.collector.metrics.MetricNames.KIND;
import static dev.trainwatch.collector.metrics.MetricNames.RUN_ID;
import static dev.trainwatch.collector.metrics.MetricNames.SEVERITY;

/**
 * The {@code trainwatch_run_*} series: gauges made from the fleet's run views at scrape time, the
 * {@code trainwatch_run_step_seconds} summary fed with every step report the fleet counts (one per step when
 * every rank logs it), and {@code trainwatch_run_anomaly{kind,severity}}. Series of a run disappear when the fleet
 * forgets the run.
 *
 * <p>The gauges and the anomaly family are one Prometheus client {@link MultiCollector}, like the GPU series: a
 * snapshot built straight from the views costs less than keeping a Micrometer meter per run and family in step
 * with the fleet. Only the step-time summary, whose quantiles need a recorded stream, stays a Micrometer meter.
 * Names, units, types and help texts are those of docs/METRICS.md (the golden scrape test pins them).
 * Thread-safe.
 */
public final class RunMetrics implements MeterBinder, MultiCollector, FleetListener {

    /** Quantiles of the step-time summary and the window they cover. */
    static final double[] STEP_QUANTILES = {0.5, 0.9};
    static final Duration STEP_WINDOW = Duration.ofMinutes(10);
    /** A report averaging more steps than this is recorded this many times (bounds the work per report). */
    static final int MAX_RECORDS_PER_REPORT = 1_000;

    private final Supplier<? extends Collection<RunView>> runs;
    private final List<Family> families = new ArrayList<>();
    private final String anomalyName = GpuSeries.prometheusName(MetricNames.RUN_ANOMALY, null);
    private final String wallName = GpuSeries.prometheusName(MetricNames.RUN_WALL, MetricNames.SECONDS);
    private final String energyName = GpuSeries.prometheusName(MetricNames.RUN_ENERGY, MetricNames.JOULES);
    private final String gpuTimeName = GpuSeries.prometheusName(MetricNames.RUN_GPU_TIME, MetricNames.SECONDS);
    private final String lossNonFiniteName = GpuSeries.prometheusName(MetricNames.RUN_LOSS_NONFINITE, null);
    /**
     * The highest value each run's counter has shown, by run and series: a counter never goes down, even when a
     * stretch first counted as a stall is later explained by a report (the ledger keeps that from happening; this
     * makes sure). Only runs present at the last scrape are kept.
     */
    private final Map<String, Map<String, Double>> counterHighs = new HashMap<>();
    private final Map<String, DistributionSummary> stepSummaries = new HashMap<>();
    private MeterRegistry registry;
    /** Run views taken by {@link #refresh()} for the scrape that follows it; consumed by {@link #collect()}. */
    private volatile Collection<RunView> prepared;

    /**
     * @param runs       the fleet's current run views, called once per scrape
     * @param wallOffset seconds the wall clock is ahead of the fleet's clock now, added to the times exported
     *                   (Prometheus compares them with its own {@code time()})
     */
    public RunMetrics(Supplier<? extends Collection<RunView>> runs, DoubleSupplier wallOffset) {
        this.runs = runs;
        observed(MetricNames.RUN_LAST_STEP, null, "Newest step number", ObservedView::lastStep);
        observed(MetricNames.RUN_LAST_STEP_TIMESTAMP, MetricNames.SECONDS, "Unix time of the newest step",
                o -> o.lastStepTs() == null ? null : o.lastStepTs() + wallOffset.getAsDouble());
        observed(MetricNames.RUN_DATA_WAIT, MetricNames.RATIO, "Share of step time spent waiting for data (0-1)",
                ObservedView::dataWaitRatio);
        observed(MetricNames.RUN_SAMPLES_PER_SECOND, null, "Observed throughput over all ranks, samples/s",
                ObservedView::samplesPerSecond);
        gauge(MetricNames.RUN_PREDICTED_STEP, MetricNames.SECONDS, "The estimator's seconds per step",
                run -> predicted(run, ComparisonView::predictedStepSeconds, Estimate::stepSeconds));
        gauge(MetricNames.RUN_PREDICTED_PEAK_MEMORY, MetricNames.BYTES, "The estimator's peak device memory per GPU",
                run -> predicted(run, ComparisonView::predictedPeakMemoryBytes, Estimate::peakMemoryBytes));
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
        observed(MetricNames.RUN_MFU, MetricNames.RATIO,
                "Model FLOP utilisation: model FLOPs per sample x samples/s / (GPUs x dense peak) (0-1)",
                ObservedView::mfuRatio);
        observed(MetricNames.RUN_HFU, MetricNames.RATIO,
                "Hardware FLOP utilisation, counting recomputation under gradient checkpointing (0-1)",
                ObservedView::hfuRatio);
        compared(MetricNames.RUN_PREDICTED_MFU, MetricNames.RATIO, "The MFU the prediction implies (0-1)",
                ComparisonView::predictedMfuRatio);
        observed(MetricNames.RUN_HARDWARE_MFU, MetricNames.RATIO,
                "Hardware MFU: the run's GPUs' mean tensor-pipe activity over the step window (GPM, 0-1)",
                ObservedView::hardwareMfuRatio);
        observed(MetricNames.RUN_GOODPUT, MetricNames.RATIO, "Productive step time over wall time (0-1)",
                ObservedView::goodputRatio);
        observed(MetricNames.RUN_COST, null, "GPU-hours held so far x the price per GPU-hour",
                ObservedView::cost);
        compared(MetricNames.RUN_PROJECTED_COST, null, "Cost so far plus the remaining steps at the observed rate",
                ComparisonView::projectedCost);
        compared(MetricNames.RUN_PROJECTED_ENERGY, MetricNames.JOULES,
                "Energy so far plus the remaining time at the current power draw", ComparisonView::projectedEnergyJoules);
        observed(MetricNames.RUN_LOSS, null, "Newest finite training loss reported", ObservedView::loss);
    }

    /** One gauge over the runs; a null reading means no series for that run. */
    private record Family(String name, String help, Function<RunView, Number> reading) {
    }

    private record AnomalyKey(String runId, String kind, String severity) {
    }

    private void gauge(String name, String unit, String help, Function<RunView, Number> reading) {
        families.add(new Family(GpuSeries.prometheusName(name, unit), help, reading));
    }

    private void observed(String name, String unit, String help, Function<ObservedView, Number> field) {
        gauge(name, unit, help, run -> run.observed() == null ? null : field.apply(run.observed()));
    }

    private void compared(String name, String unit, String help, Function<ComparisonView, Number> field) {
        gauge(name, unit, help, run -> run.comparison() == null ? null : field.apply(run.comparison()));
    }

    @Override
    public synchronized void bindTo(MeterRegistry meterRegistry) {
        MetricsExporter.register(meterRegistry, this);
        this.registry = meterRegistry;
    }

    @Override
    public List<String> getPrometheusNames() {
        List<String> names = new ArrayList<>(families.stream().map(Family::name).toList());
        names.addAll(List.of(wallName, lossNonFiniteName, energyName, gpuTimeName, anomalyName));
        return names;
    }

    @Override
    public MetricSnapshots collect() {
        // The views refresh() just took for this scrape, if any; otherwise (a scrape not made through the exporter)
        // fresh ones. Taking the fleet's run views is the costly part, so a scrape takes them once.
        Collection<RunView> taken = prepared;
        prepared = null;
        Labelled<RunView> labelled = Labelled.sorted(taken != null ? taken : runs.get(),
                run -> Labels.of(RUN_ID, LabelValues.sanitize(run.runId())));
        List<RunView> views = labelled.items();
        List<Labels> labels = labelled.labels();
        List<MetricSnapshot> snapshots = new ArrayList<>(families.size() + 1);
        for (Family family : families) {
            snapshots.add(labelled.gauge(family.name(), family.help(), family.reading()));
        }
        snapshots.addAll(counters(views, labels));
        snapshots.add(anomalies(views, labels));
        return new MetricSnapshots(snapshots);
    }

    /** The run counters: wall seconds by reason (not the pending part), energy, GPU-seconds. */
    private List<CounterSnapshot> counters(List<RunView> views, List<Labels> labels) {
        CounterSnapshot.Builder wall = CounterSnapshot.builder().name(wallName)
                .help("Wall time by what it went to (the goodput parts; lags wall time by at most one report)");
        CounterSnapshot.Builder energy = CounterSnapshot.builder().name(energyName)
                .help("Energy the run's GPUs used while attributed to it");
        CounterSnapshot.Builder gpuTime = CounterSnapshot.builder().name(gpuTimeName)
                .help("GPU-seconds the run held (divide by 3600 for GPU-hours)");
        CounterSnapshot.Builder lossNonFinite = CounterSnapshot.builder().name(lossNonFiniteName)
                .help("Step reports whose loss was NaN or infinite");
        Map<String, Map<String, Double>> highs = new HashMap<>();
        synchronized (counterHighs) {
            for (int i = 0; i < views.size(); i++) {
                RunView run = views.get(i);
                ObservedView o = run.observed();
                if (o == null) {
                    continue;
                }
                Map<String, Double> before = counterHighs.getOrDefault(run.runId(), Map.of());
                Map<String, Double> now = new HashMap<>();
                if (o.wallSeconds() != null) {
                    for (String reason : MetricNames.WALL_REASONS) {
                        wall.dataPoint(point(labels.get(i).add(MetricNames.REASON, reason),
                                monotone(before, now, reason, o.wallSeconds().getOrDefault(reason, 0.0))));
                    }
                }
                if (o.energyJoules() != null) {
                    energy.dataPoint(point(labels.get(i), monotone(before, now, "energy", o.energyJoules())));
                }
                lossNonFinite.dataPoint(point(labels.get(i),
                        o.lossNonfiniteReports() == null ? 0 : o.lossNonfiniteReports()));
                if (o.gpuHours() != null) {
                    gpuTime.dataPoint(point(labels.get(i), monotone(before, now, "gpu", o.gpuHours() * 3600)));
                }
                highs.put(run.runId(), now);
            }
            counterHighs.clear();
            counterHighs.putAll(highs);
        }
        return List.of(wall.build(), energy.build(), gpuTime.build(), lossNonFinite.build());
    }

    private static CounterSnapshot.CounterDataPointSnapshot point(Labels labels, double value) {
        return CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(value).build();
    }

    private static double monotone(Map<String, Double> before, Map<String, Double> now, String key, double value) {
        double v = Math.max(value, before.getOrDefault(key, 0.0));
        now.put(key, v);
        return v;
    }

    /** 1 per (run, kind, severity) with an active anomaly, 0 where the history holds only resolved ones. */
    private GaugeSnapshot anomalies(List<RunView> views, List<Labels> labels) {
        GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(anomalyName)
                .help("1 while the anomaly is active, 0 after");
        for (int i = 0; i < views.size(); i++) {
            RunView run = views.get(i);
            if (run.anomalies() == null) {
                continue;
            }
            Map<AnomalyKey, Boolean> states = new LinkedHashMap<>();
            for (Anomaly anomaly : run.anomalies()) {
                AnomalyKey key = new AnomalyKey(run.runId(), anomaly.kind().wireName(),
                        anomaly.severity().wireName());
                // An active anomaly wins over a resolved one of the same kind and severity in the history.
                states.merge(key, anomaly.active(), Boolean::logicalOr);
            }
            for (Map.Entry<AnomalyKey, Boolean> state : states.entrySet()) {
                gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                        .labels(labels.get(i).add(KIND, state.getKey().kind())
                                .add(SEVERITY, state.getKey().severity()))
                        .value(state.getValue() ? 1 : 0).build());
            }
        }
        return gauge.build();
    }

    /** The comparison's prediction when it has one, else the estimate's. */
    private static Number predicted(RunView run, Function<ComparisonView, Number> compared,
                                    Function<Estimate, Number> estimated) {
        Number value = run.comparison() == null ? null : compared.apply(run.comparison());
        return value != null || run.estimate() == null ? value : estimated.apply(run.estimate());
    }

    @Override
    public boolean wantsRunChanges() {
        return false;
    }

    /**
     * The fleet counted steps of a run (by any ingest path): they feed its step-time summary. A report that averages
     * {@code interval_steps} steps counts as that many steps of its mean time, so count and sum stay in steps.
     */
    @Override
    public synchronized void onStepsApplied(String runId, List<StepEvent> steps) {
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

    /**
     * Drops the step-time summaries of runs the fleet forgot, before a scrape; the gauges need nothing (they are
     * made at collection). The run views taken here are handed to that scrape's {@link #collect()}.
     */
    public synchronized void refresh() {
        if (registry == null) {
            return;
        }
        Collection<RunView> views = runs.get();
        prepared = views;
        if (stepSummaries.isEmpty()) {
            return;
        }
        Set<String> present = views.stream().map(RunView::runId).collect(Collectors.toSet());
        stepSummaries.entrySet().removeIf(entry -> {
            if (present.contains(entry.getKey())) {
                return false;
            }
            registry.remove(entry.getValue());
            return true;
        });
    }
}
