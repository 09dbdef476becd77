package dev.trainwatch.collector.metrics;

import static dev.trainwatch.collector.metrics.MetricNames.GPU;
import static dev.trainwatch.collector.metrics.MetricNames.GPU_UUID;
import static dev.trainwatch.collector.metrics.MetricNames.HOST;
import static dev.trainwatch.collector.metrics.MetricNames.KIND;
import static dev.trainwatch.collector.metrics.MetricNames.REASON;
import static dev.trainwatch.collector.metrics.MetricNames.RUN_ID;

import dev.trainwatch.collector.state.GpuView;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The {@code trainwatch_gpu_*} series: one set per GPU the fleet knows, read from its newest sample. A reading the
 * GPU did not report has no series. Call {@link #refresh} before each scrape (the exporter does); thread-safe.
 */
public final class GpuMetrics implements MeterBinder {

    private final Supplier<? extends Collection<GpuView>> gpus;
    private final List<GaugeFamily<String, GpuView>> families = new ArrayList<>();
    private GaugeFamily<String, ClockEvent> clockEvents;
    private final Map<XidKey, FunctionCounter> xidCounters = new HashMap<>();
    private MeterRegistry registry;
    private volatile Map<String, GpuView> current = Map.of();

    /** @param gpus the fleet's current GPU views, called once per refresh */
    public GpuMetrics(Supplier<? extends Collection<GpuView>> gpus) {
        this.gpus = gpus;
    }

    private record ClockEvent(GpuView gpu, String reason) {
    }

    private record XidKey(String uuid, Tags tags, String xid) {
    }

    @Override
    public synchronized void bindTo(MeterRegistry meterRegistry) {
        this.registry = meterRegistry;
        gauge(MetricNames.GPU_MEMORY_USED, MetricNames.BYTES, "Device memory in use", s -> s.memoryUsedBytes());
        gauge(MetricNames.GPU_MEMORY_TOTAL, MetricNames.BYTES, "Device memory", s -> s.memoryTotalBytes());
        gauge(MetricNames.GPU_UTILIZATION, MetricNames.RATIO,
                "Share of the last sample period any kernel ran (0-1)", s -> s.utilizationRatio());
        gauge(MetricNames.GPU_UTILIZATION_MIN, MetricNames.RATIO,
                "Lowest buffered utilisation sample since the previous poll (0-1)",
                s -> window(s) == null ? null : window(s).minRatio());
        gauge(MetricNames.GPU_IDLE_FRACTION, MetricNames.RATIO,
                "Share of buffered utilisation samples at or below 5% since the previous poll (0-1)",
                s -> window(s) == null ? null : window(s).idleFraction());
        gauge(MetricNames.GPU_SM_CLOCK, MetricNames.HERTZ, "Current SM clock", s -> s.smClockHz());
        gauge(MetricNames.GPU_SM_CLOCK_MAX, MetricNames.HERTZ, "Maximum SM clock", s -> s.smClockMaxHz());
        gauge(MetricNames.GPU_POWER, MetricNames.WATTS, "Power draw", s -> s.powerWatts());
        gauge(MetricNames.GPU_POWER_LIMIT, MetricNames.WATTS, "Enforced power limit", s -> s.powerLimitWatts());
        gauge(MetricNames.GPU_TEMPERATURE, MetricNames.CELSIUS, "Core temperature", s -> s.temperatureCelsius());
        families.add(new GaugeFamily<>(registry, MetricNames.GPU_LOST, null, "1 while NVML reports the GPU lost",
                GpuMetrics::tags, view -> Boolean.TRUE.equals(view.latest().lost()) ? 1 : 0));
        clockEvents = new GaugeFamily<>(registry, MetricNames.GPU_CLOCK_EVENT_ACTIVE, null,
                "1 while the clock-event (throttle) reason is active",
                event -> tags(event.gpu()).and(REASON, event.reason()),
                event -> event.gpu().latest().clockEventReasons().contains(event.reason()) ? 1 : 0);
        if (meterRegistry instanceof PrometheusMeterRegistry prometheus) {
            // An info metric keeps its _info suffix only as the client's own type; Micrometer would strip it.
            prometheus.getPrometheusRegistry().register(this::runInfo);
        }
    }

    private void gauge(String name, String unit, String description, GaugeFamily.Reading<GpuSample> reading) {
        families.add(new GaugeFamily<>(registry, name, unit, description, GpuMetrics::tags,
                view -> view.latest() == null ? null : reading.read(view.latest())));
    }

    private static UtilizationWindow window(GpuSample sample) {
        return sample.utilizationWindow();
    }

    static Tags tags(GpuView view) {
        GpuSample latest = view.latest();
        String index = latest == null ? "" : Integer.toString(latest.index());
        return Tags.of(HOST, LabelValues.sanitize(view.host()), GPU, index, GPU_UUID,
                LabelValues.sanitize(view.uuid()));
    }

    /** Brings every GPU series in line with the fleet's current views. */
    public synchronized void refresh() {
        if (registry == null) {
            return;
        }
        Map<String, GpuView> snapshot = new LinkedHashMap<>();
        for (GpuView view : gpus.get()) {
            if (view.latest() != null) {
                snapshot.put(view.uuid(), view);
            }
        }
        current = snapshot;
        for (GaugeFamily<String, GpuView> family : families) {
            family.update(snapshot);
        }
        Map<String, ClockEvent> events = new LinkedHashMap<>();
        for (GpuView view : snapshot.values()) {
            if (view.latest().clockEventReasons() != null && !Boolean.TRUE.equals(view.latest().lost())) {
                for (String reason : MetricNames.CLOCK_EVENT_REASONS) {
                    events.put(view.uuid() + '\u0000' + reason, new ClockEvent(view, reason));
                }
            }
        }
        clockEvents.update(events);
        refreshXidCounters(snapshot);
    }

    private void refreshXidCounters(Map<String, GpuView> snapshot) {
        Set<XidKey> seen = new HashSet<>();
        for (GpuView view : snapshot.values()) {
            if (view.xidCounts() == null) {
                continue;
            }
            Tags tags = tags(view);
            for (String xid : view.xidCounts().keySet()) {
                XidKey key = new XidKey(view.uuid(), tags, xid);
                seen.add(key);
                xidCounters.computeIfAbsent(key, k -> FunctionCounter
                        .builder(MetricNames.GPU_XID_ERRORS, k, this::xidCount)
                        .description("XID errors reported by the driver")
                        .tags(k.tags().and(KIND, LabelValues.sanitize(k.xid())))
                        .register(registry));
            }
        }
        xidCounters.entrySet().removeIf(entry -> {
            if (seen.contains(entry.getKey())) {
                return false;
            }
            registry.remove(entry.getValue());
            return true;
        });
    }

    private double xidCount(XidKey key) {
        GpuView view = current.get(key.uuid());
        Long count = view == null || view.xidCounts() == null ? null : view.xidCounts().get(key.xid());
        return count == null ? Double.NaN : count;
    }

    /** {@code trainwatch_gpu_run_info}: 1 per GPU attributed to a run, to join GPU series to runs. */
    private InfoSnapshot runInfo() {
        InfoSnapshot.Builder info = InfoSnapshot.builder().name(MetricNames.GPU_RUN_INFO)
                .help("1 for each GPU attributed to a run");
        for (GpuView view : current.values()) {
            if (view.runId() != null) {
                info.dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder()
                        .labels(Labels.of(HOST, LabelValues.sanitize(view.host()),
                                GPU, Integer.toString(view.latest().index()),
                                GPU_UUID, LabelValues.sanitize(view.uuid()),
                                RUN_ID, LabelValues.sanitize(view.runId())))
                        .build());
            }
        }
        return info.build();
    }
}
