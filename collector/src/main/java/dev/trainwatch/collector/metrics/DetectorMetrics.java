package dev.trainwatch.collector.metrics;

import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.exposition.LabelValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot.SummaryDataPointSnapshot;
import dev.trainwatch.collector.state.DetectorCost;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code trainwatch_detector_errors_total{kind}} (only detectors that threw have a series) and
 * {@code trainwatch_detector_evaluation_seconds{kind}}, what each detector costs. Thread-safe.
 */
public final class DetectorMetrics implements MeterBinder, MultiCollector {
    private final Supplier<Map<String, Long>> errors;
    private final Supplier<Map<String, DetectorCost.Total>> costs;
    private final String name = GpuSeries.prometheusName(MetricNames.DETECTOR_ERRORS, null);
    private final String evaluationName = GpuSeries.prometheusName(MetricNames.DETECTOR_EVALUATION, "seconds");

    public DetectorMetrics(Supplier<Map<String, Long>> errors, Supplier<Map<String, DetectorCost.Total>> costs) {
        this.errors = errors;
        this.costs = costs;
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        MetricsExporter.register(meterRegistry, this);
    }

    @Override
    public List<String> getPrometheusNames() {
        return List.of(name, evaluationName);
    }

    @Override
    public MetricSnapshots collect() {
        CounterSnapshot.Builder counter = CounterSnapshot.builder().name(name)
                .help("Evaluations in which a detector failed (a bug: the detector is skipped, ingest goes on)");
        errors.get().forEach((kind, count) -> counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                .labels(Labels.of("kind", LabelValues.sanitize(kind))).value(count).build()));
        SummarySnapshot.Builder evaluation = SummarySnapshot.builder().name(evaluationName)
                .help("Evaluations of each detector since the collector started and the seconds they took");
        costs.get().forEach((kind, total) -> evaluation.dataPoint(SummaryDataPointSnapshot.builder()
                .labels(Labels.of("kind", LabelValues.sanitize(kind))).count(total.evaluations())
                .sum(total.seconds()).build()));
        return MetricSnapshots.of(counter.build(), evaluation.build());
    }
}
