package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.protocol.GpuSample;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Collection;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@code trainwatch_gpu_*} series of every GPU the fleet knows ({@link GpuSeries}, the same families each agent
 * serves for its own node) on the collector's registry. Registered only when the collector exports per-GPU series
 * ({@code --gpu-series}): a large fleet leaves them to the agents' exporters. Thread-safe.
 */
public final class GpuMetrics implements MeterBinder {

    private final GpuSeries series;

    /** A fleet GPU as the series read it (the fleet's state knows nothing of its outputs). */
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

    /** @param gpus the fleet's current GPU views, called once per scrape */
    public GpuMetrics(Supplier<? extends Collection<GpuView>> gpus) {
        this.series = new GpuSeries(() -> gpus.get().stream().map(FleetGpu::new).toList());
    }

    /** The families, for a registry other than Micrometer's (benchmarks). */
    public GpuSeries series() {
        return series;
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        if (meterRegistry instanceof PrometheusMeterRegistry prometheus) {
            prometheus.getPrometheusRegistry().register(series);
        } else {
            throw new IllegalArgumentException("GPU metrics are exported through a PrometheusMeterRegistry only");
        }
    }
}
