package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.protocol.GpuSample;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Collection;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@code trainwatch_gpu_*} series of every GPU the fleet knows ({@link GpuSeries}, the families each agent serves
 * for its own node). Thread-safe.
 */
public final class GpuMetrics implements MeterBinder {

    private final GpuSeries series;

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

    public GpuMetrics(Supplier<? extends Collection<GpuView>> gpus) {
        this.series = new GpuSeries(() -> gpus.get().stream().map(FleetGpu::new).toList());
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        MetricsExporter.register(meterRegistry, series);
    }
}
