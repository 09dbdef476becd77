package dev.trainwatch.exposition;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The nodes' memory and /dev/shm, one series per {@code host}, as the agents last read them; shared by the collector
 * and each agent. Thread-safe.
 */
public final class HostSeries implements MultiCollector {

    /** A node's memory as last read; bytes, null where it could not be read. */
    public interface Host {
        String host();

        Long memAvailableBytes();

        Long memTotalBytes();

        Long shmUsedBytes();

        Long shmTotalBytes();
    }

    private record Family(String name, String help, Function<Host, Long> reading) {
    }

    private final Supplier<? extends Collection<? extends Host>> hosts;
    private final List<Family> families = List.of(
            new Family(SeriesNames.HOST_MEMORY_AVAILABLE, "MemAvailable of the node (what can be allocated "
                    + "without swapping)", Host::memAvailableBytes),
            new Family(SeriesNames.HOST_MEMORY_TOTAL, "MemTotal of the node", Host::memTotalBytes),
            new Family(SeriesNames.HOST_SHM_USED, "Space used in /dev/shm", Host::shmUsedBytes),
            new Family(SeriesNames.HOST_SHM_TOTAL, "Size of /dev/shm", Host::shmTotalBytes));

    /** @param hosts the nodes to export, called once per scrape */
    public HostSeries(Supplier<? extends Collection<? extends Host>> hosts) {
        this.hosts = hosts;
    }

    @Override
    public List<String> getPrometheusNames() {
        return families.stream().map(Family::name).toList();
    }

    @Override
    public MetricSnapshots collect() {
        Labelled<Host> views = Labelled.sorted(hosts.get(),
                v -> Labels.of(SeriesNames.HOST, LabelValues.sanitize(v.host())));
        List<MetricSnapshot> out = new ArrayList<>(families.size());
        for (Family f : families) {
            out.add(views.gauge(f.name(), f.help(), f.reading()));
        }
        return new MetricSnapshots(out);
    }
}
