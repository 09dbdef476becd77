package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.HostMemoryView;
import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.exposition.HostSeries;
import dev.trainwatch.protocol.GpuSample;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Collection;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The series each agent serves for its own node, here for every GPU ({@link GpuSeries}: {@code trainwatch_gpu_*})
 * and node ({@link HostSeries}: {@code trainwatch_host_*}) of the fleet, read from its views. Thread-safe.
 */
public final class FleetSeries {

    private FleetSeries() {
    }

    static MeterBinder gpus(Supplier<? extends Collection<GpuView>> gpus) {
        GpuSeries series = new GpuSeries(() -> gpus.get().stream().map(FleetGpu::new).toList());
        return registry -> MetricsExporter.register(registry, series);
    }

    public static MeterBinder hosts(Supplier<? extends Collection<HostMemoryView>> hosts) {
        HostSeries series = new HostSeries(() -> hosts.get().stream().map(FleetHost::new).toList());
        return registry -> MetricsExporter.register(registry, series);
    }

    private record FleetGpu(GpuView view) implements GpuSeries.Gpu {
        @Override
        public String uuid() {
            return view.uuid();
        }

        @Override
        public String host() {
            return view.host();
        }

        @Override
        public String runId() {
            return view.runId();
        }

        @Override
        public GpuSample latest() {
            return view.latest();
        }

        @Override
        public Map<String, Long> xidCounts() {
            return view.xidCounts();
        }
    }

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
}
