package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.HostMemoryView;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The nodes' memory, one series per {@code host}: {@code trainwatch_host_memory_available_bytes},
 * {@code trainwatch_host_memory_total_bytes}, {@code trainwatch_host_shm_used_bytes},
 * {@code trainwatch_host_shm_total_bytes}, as the agents last read them (what the OOM killer and DataLoader workers
 * run out of). A reading an agent could not take has no series. Thread-safe.
 */
public final class HostMetrics implements MeterBinder, MultiCollector {

    private record Family(String name, String help, Function<HostMemoryView, Long> reading) {
    }

    private final Supplier<? extends Collection<HostMemoryView>> hosts;
    private final List<Family> families = List.of(
            new Family("trainwatch_host_memory_available_bytes", "MemAvailable of the node (what can be allocated "
                    + "without swapping)", HostMemoryView::memAvailableBytes),
            new Family("trainwatch_host_memory_total_bytes", "MemTotal of the node", HostMemoryView::memTotalBytes),
            new Family("trainwatch_host_shm_used_bytes", "Space used in /dev/shm", HostMemoryView::shmUsedBytes),
            new Family("trainwatch_host_shm_total_bytes", "Size of /dev/shm", HostMemoryView::shmTotalBytes));

    public HostMetrics(Supplier<? extends Collection<HostMemoryView>> hosts) {
        this.hosts = hosts;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!(registry instanceof PrometheusMeterRegistry prometheus)) {
            throw new IllegalArgumentException("host metrics are exported through a PrometheusMeterRegistry only");
        }
        prometheus.getPrometheusRegistry().register(this);
    }

    @Override
    public List<String> getPrometheusNames() {
        return families.stream().map(Family::name).toList();
    }

    @Override
    public MetricSnapshots collect() {
        Collection<HostMemoryView> views = hosts.get();
        List<MetricSnapshot> out = new ArrayList<>(families.size());
        for (Family f : families) {
            GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(f.name()).help(f.help());
            for (HostMemoryView v : views) {
                Long value = f.reading().apply(v);
                if (value != null) {
                    gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                            .labels(Labels.of(MetricNames.HOST, LabelValues.sanitize(v.host()))).value(value).build());
                }
            }
            out.add(gauge.build());
        }
        return new MetricSnapshots(out);
    }
}
