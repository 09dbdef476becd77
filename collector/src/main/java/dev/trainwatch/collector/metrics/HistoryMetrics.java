package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.history.SummaryWriter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * The run history's own health, so a slow or full disk shows on a dashboard. The meters read the writer itself
 * (Micrometer holds it weakly; a lambda nothing else references would be collected and read NaN).
 */
public final class HistoryMetrics implements MeterBinder {
    private final SummaryWriter writer;

    public HistoryMetrics(SummaryWriter writer) {
        this.writer = Objects.requireNonNull(writer, "writer");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(MetricNames.HISTORY_PENDING, writer, w -> w.stats().pending())
                .baseUnit(MetricNames.RUNS)
                .description("Runs whose changed summary waits to be written to the history database")
                .register(registry);
        counter(registry, "ok", w -> w.stats().writes());
        counter(registry, "failed", w -> w.stats().failedWrites());
        FunctionCounter.builder(MetricNames.HISTORY_DROPPED_SUMMARIES, writer, w -> w.stats().dropped())
                .description("Run summaries not written because too many runs already waited (disk slow or full)")
                .register(registry);
    }

    private void counter(MeterRegistry registry, String outcome, ToDoubleFunction<SummaryWriter> f) {
        FunctionCounter.builder(MetricNames.HISTORY_WRITES, writer, f)
                .tag(MetricNames.OUTCOME, outcome)
                .description("Transactions writing run summaries to the history database")
                .register(registry);
    }
}
