package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.HostMemoryView;
import dev.trainwatch.exposition.HostSeries;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Collection;
import java.util.function.Supplier;

/** The nodes' memory series ({@link HostSeries}: {@code trainwatch_host_*}), read from the fleet's views. */
public final class HostMetrics implements MeterBinder {

    private final HostSeries series;

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
        MetricsExporter.register(registry, series);
    }
}
