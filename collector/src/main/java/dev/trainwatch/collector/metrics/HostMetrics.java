package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.HostMemoryView;
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

    /** A node's memory as the series read it (the fleet's state knows nothing of its outputs). */
    private record FleetHost(HostMemoryView view) implements HostSeries.Host {
        @Override
        public String host() {
            return view.host();
        }

        @Override
        public Long memAvailableBytes() {
            return view.memAvailableBytes();
        }

        @Override
        public Long memTotalBytes() {
            return view.memTotalBytes();
        }

        @Override
        public Long shmUsedBytes() {
            return view.shmUsedBytes();
        }

        @Override
        public Long shmTotalBytes() {
            return view.shmTotalBytes();
        }
    }

    public HostMetrics(Supplier<? extends Collection<HostMemoryView>> hosts) {
        this.series = new HostSeries(() -> hosts.get().stream().map(FleetHost::new).toList());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!(registry instanceof PrometheusMeterRegistry prometheus)) {
            throw new IllegalArgumentException("host metrics are exported through a PrometheusMeterRegistry only");
        }
        prometheus.getPrometheusRegistry().register(series);
    }
}
