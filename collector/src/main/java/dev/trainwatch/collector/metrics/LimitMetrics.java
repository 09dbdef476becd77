package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.Slots;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The collector's limits, one series per {@code reason} ({@link Slots.Kind}). For ranks, "in use" is the most ranks
 * one run tracks, against the per-run limit.
 */
public final class LimitMetrics implements MeterBinder {
    private final Supplier<List<Slots.Usage>> limits;

    public LimitMetrics(Supplier<List<Slots.Usage>> limits) {
        this.limits = limits;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (Slots.Kind kind : Slots.Kind.values()) {
            String reason = kind.label();
            Gauge.builder(MetricNames.LIMIT_ENTRIES, this, m -> m.read(kind, Slots.Usage::used))
                    .description("Entries the collector tracks against this limit")
                    .tag(MetricNames.REASON, reason).register(registry);
            Gauge.builder(MetricNames.LIMIT_MAX_ENTRIES, this, m -> m.read(kind, Slots.Usage::limit))
                    .description("The limit: entries the collector tracks at most")
                    .tag(MetricNames.REASON, reason).register(registry);
            FunctionCounter.builder(MetricNames.LIMIT_REFUSED, this, m -> m.read(kind, Slots.Usage::refused))
                    .description("New entries refused because every slot held a live one")
                    .tag(MetricNames.REASON, reason).register(registry);
            FunctionCounter.builder(MetricNames.LIMIT_FORGOTTEN, this, m -> m.read(kind, Slots.Usage::forgotten))
                    .description("Ended, silent or spec-only entries forgotten to make room for new ones")
                    .tag(MetricNames.REASON, reason).register(registry);
        }
    }

    private double read(Slots.Kind kind, ToDoubleFunction<Slots.Usage> field) {
        return limits.get().stream().filter(usage -> usage.kind() == kind).mapToDouble(field).findFirst()
                .orElse(Double.NaN);
    }
}
