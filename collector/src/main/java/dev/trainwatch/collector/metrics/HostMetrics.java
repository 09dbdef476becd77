package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.HostMemoryView;
import dev.trainwatch.exposition.HostSeries;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Collection;
import java.util.function.Supplier;

/**
 * The nodes' memory series ({@link HostSeries}: {@code trainwatch_host_*}, one per {@code host}) on the collector's
 * registry, read from the fleet's views. Thread-safe.
 */
public final class HostMetrics implements MeterBinder {

    private final HostSeries series;

    public HostMetrics(Supplier<? extends Collection<HostMemoryView>> hosts) {
        this.series = new HostSeries(hosts);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!(registry instanceof PrometheusMeterRegistry prometheus)) {
            throw new IllegalArgumentException("host metrics are exported through a PrometheusMeterRegistry only");
        }
        prometheus.getPrometheusRegistry().register(series);
    }
}
