package dev.trainwatch.exposition;

import static dev.trainwatch.exposition.SeriesNames.GPU;
import static dev.trainwatch.exposition.SeriesNames.GPU_UUID;
import static dev.trainwatch.exposition.SeriesNames.HOST;
import static dev.trainwatch.exposition.SeriesNames.KIND;
import static dev.trainwatch.exposition.SeriesNames.REASON;
import static dev.trainwatch.exposition.SeriesNames.RUN_ID;

import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@code trainwatch_gpu_*} series, one set per GPU from its newest sample (an unreported reading has none), made
 * straight from the fleet's views at scrape time as one {@link MultiCollector}: ~20,000 series at 1,024 GPUs cost most
 * of a scrape as Micrometer meters. Names, units and help as docs/METRICS.md (the golden scrape pins them); shared by
 * the collector and each agent's {@code /metrics}. Thread-safe.
 */
public final class GpuSeries implements MultiCollector {

    /**
     * A GPU as exported: where it is ({@code host}, {@code gpu_uuid}), its newest reading (none: no series), the run
     * it is attributed to (or null) and its XID counts by XID number (or null). The collector's {@code GpuView} is
     * one; an agent makes one per GPU of its node.
     */
    public interface Gpu {
        String uuid();

        String host();

        String runId();

        GpuSample latest();

        Map<String, Long> xidCounts();
    }

    private final Supplier<? extends Collection<? extends Gpu>> gpus;
    private final List<Family> families = new ArrayList<>();
    private final List<String> names = new ArrayList<>();

    /** @param gpus the GPUs to export, called once per scrape */
    public GpuSeries(Supplier<? extends Collection<? extends Gpu>> gpus) {
        this.gpus = gpus;
        gauge(SeriesNames.GPU_MEMORY_USED, SeriesNames.BYTES, "Device memory in use", s -> s.memoryUsedBytes());
        gauge(SeriesNames.GPU_MEMORY_TOTAL, SeriesNames.BYTES, "Device memory", s -> s.memoryTotalBytes());
        gauge(SeriesNames.GPU_UTILIZATION, SeriesNames.RATIO,
                "Share of the last sample period any kernel ran (0-1)", s -> s.utilizationRatio());
        gauge(SeriesNames.GPU_UTILIZATION_MIN, SeriesNames.RATIO,
                "Lowest buffered utilisation sample since the previous poll (0-1)",
                s -> s.utilizationWindow() == null ? null : s.utilizationWindow().minRatio());
        gauge(SeriesNames.GPU_IDLE_FRACTION, SeriesNames.RATIO,
                "Share of buffered utilisation samples at or below 5% since the previous poll (0-1)",
                s -> s.utilizationWindow() == null ? null : s.utilizationWindow().idleFraction());
        gauge(SeriesNames.GPU_SM_CLOCK, SeriesNames.HERTZ, "Current SM clock", s -> s.smClockHz());
        gauge(SeriesNames.GPU_SM_CLOCK_MAX, SeriesNames.HERTZ, "Maximum SM clock", s -> s.smClockMaxHz());
        gauge(SeriesNames.GPU_POWER, SeriesNames.WATTS, "Power draw", s -> s.powerWatts());
        gauge(SeriesNames.GPU_POWER_LIMIT, SeriesNames.WATTS, "Enforced power limit", s -> s.powerLimitWatts());
        gauge(SeriesNames.GPU_TEMPERATURE, SeriesNames.CELSIUS, "Core temperature", s -> s.temperatureCelsius());
        gauge(SeriesNames.GPU_LOST, null, "1 while NVML reports the GPU lost",
                s -> Boolean.TRUE.equals(s.lost()) ? 1 : 0);
        gauge(SeriesNames.GPU_SM_ACTIVE, SeriesNames.RATIO,
                "Share of SMs busy over the agent's poll interval (GPM, 0-1)",
                s -> activity(s, GpuActivity::smActiveRatio, 1));
        gauge(SeriesNames.GPU_SM_OCCUPANCY, SeriesNames.RATIO,
                "Resident warps against the SMs' maximum over the poll interval (GPM, 0-1)",
                s -> activity(s, GpuActivity::smOccupancyRatio, 1));
        gauge(SeriesNames.GPU_TENSOR_ACTIVE, SeriesNames.RATIO,
                "Share of time any tensor pipe was busy over the poll interval (GPM, 0-1)",
                s -> activity(s, GpuActivity::tensorActiveRatio, 1));
        gauge(SeriesNames.GPU_DRAM_ACTIVE, SeriesNames.RATIO,
                "DRAM bandwidth used against the maximum over the poll interval (GPM, 0-1)",
                s -> activity(s, GpuActivity::dramActiveRatio, 1));
        gauge(SeriesNames.GPU_PCIE_RX, SeriesNames.BYTES_PER_SECOND,
                "PCIe traffic into the GPU (GPM over the poll interval, else NVML's 20 ms window)",
                s -> activity(s, GpuActivity::pcieRxBytesPerSecond, Double.MAX_VALUE));
        gauge(SeriesNames.GPU_PCIE_TX, SeriesNames.BYTES_PER_SECOND,
                "PCIe traffic out of the GPU (GPM over the poll interval, else NVML's 20 ms window)",
                s -> activity(s, GpuActivity::pcieTxBytesPerSecond, Double.MAX_VALUE));
        counter(SeriesNames.GPU_ENERGY, SeriesNames.JOULES, "Energy used since the driver loaded (NVML's counter)",
                s -> Boolean.TRUE.equals(s.lost()) ? null : within(s.energyJoules(), Double.MAX_VALUE));
        counter(SeriesNames.GPU_NVLINK_RX, SeriesNames.BYTES, "NVLink data received, all links (NVML's counter)",
                s -> activity(s, GpuActivity::nvlinkRxBytes, Double.MAX_VALUE));
        counter(SeriesNames.GPU_NVLINK_TX, SeriesNames.BYTES, "NVLink data sent, all links (NVML's counter)",
                s -> activity(s, GpuActivity::nvlinkTxBytes, Double.MAX_VALUE));
        names.add(prometheusName(SeriesNames.GPU_CLOCK_EVENT_ACTIVE, null));
        names.add(prometheusName(SeriesNames.GPU_XID_ERRORS, null));
        names.add(SeriesNames.GPU_RUN_INFO);
    }

    /** An activity reading in [0, max], else no series (a hostile or broken agent's value is not exported). */
    private static Number activity(GpuSample s, Function<GpuActivity, ? extends Number> field, double max) {
        return s.activity() == null || Boolean.TRUE.equals(s.lost()) ? null : within(field.apply(s.activity()), max);
    }

    private static Number within(Number v, double max) {
        return v != null && v.doubleValue() >= 0 && v.doubleValue() <= max ? v : null;
    }

    /** One gauge or counter over the GPUs' newest samples; a null reading means no series for that GPU. */
    private record Family(String name, String help, boolean counter, Function<GpuSample, Number> reading) {
    }

    private void gauge(String name, String unit, String help, Function<GpuSample, Number> reading) {
        families.add(new Family(prometheusName(name, unit), help, false, reading));
        names.add(prometheusName(name, unit));
    }

    private void counter(String name, String unit, String help, Function<GpuSample, Number> reading) {
        families.add(new Family(prometheusName(name, unit), help, true, reading));
        names.add(prometheusName(name, unit));
    }

    /** Micrometer's Prometheus name for {@code name} with {@code unit}: dots to underscores, the unit appended once. */
    public static String prometheusName(String name, String unit) {
        String base = name.replace('.', '_');
        return unit == null || base.endsWith('_' + unit) ? base : base + '_' + unit;
    }

    @Override
    public List<String> getPrometheusNames() {
        return names;
    }

    @Override
    public MetricSnapshots collect() {
        Labelled<Gpu> labelled = Labelled.sorted(gpus.get(), view -> {
            GpuSample latest = view.latest();
            return latest == null ? null : Labels.of(HOST, LabelValues.sanitize(view.host()), GPU,
                    Integer.toString(latest.index()), GPU_UUID, LabelValues.sanitize(view.uuid()));
        });
        List<? extends Gpu> views = labelled.items();
        List<Labels> labels = labelled.labels();
        List<MetricSnapshot> snapshots = new ArrayList<>(families.size() + 3);
        for (Family family : families) {
            snapshots.add(snapshot(family, labelled));
        }
        snapshots.add(clockEvents(views, labels));
        snapshots.add(xidErrors(views, labels));
        snapshots.add(runInfo(views, labels));
        return new MetricSnapshots(snapshots);
    }

    private static MetricSnapshot snapshot(Family family, Labelled<? extends Gpu> labelled) {
        if (!family.counter()) {
            return labelled.gauge(family.name(), family.help(), gpu -> family.reading().apply(gpu.latest()));
        }
        CounterSnapshot.Builder counter = CounterSnapshot.builder().name(family.name()).help(family.help());
        for (int i = 0; i < labelled.items().size(); i++) {
            Number value = family.reading().apply(labelled.items().get(i).latest());
            if (value != null) {
                counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labelled.labels().get(i)).value(value.doubleValue()).build());
            }
        }
        return counter.build();
    }

    /** Every exported reason of every GPU that reports reasons and is not lost: 1 if active, else 0. */
    private static GaugeSnapshot clockEvents(List<? extends Gpu> views, List<Labels> labels) {
        GaugeSnapshot.Builder gauge = GaugeSnapshot.builder()
                .name(prometheusName(SeriesNames.GPU_CLOCK_EVENT_ACTIVE, null))
                .help("1 while the clock-event (throttle) reason is active");
        for (int i = 0; i < views.size(); i++) {
            GpuSample latest = views.get(i).latest();
            List<String> active = latest.clockEventReasons();
            if (active == null || Boolean.TRUE.equals(latest.lost())) {
                continue;
            }
            for (String reason : SeriesNames.CLOCK_EVENT_REASONS) {
                gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                        .labels(labels.get(i).add(REASON, reason))
                        .value(active.contains(reason) ? 1 : 0).build());
            }
        }
        return gauge.build();
    }

    /** {@code trainwatch_gpu_xid_errors_total}: the driver's count per XID kind, for GPUs that report any. */
    private static CounterSnapshot xidErrors(List<? extends Gpu> views, List<Labels> labels) {
        CounterSnapshot.Builder counter = CounterSnapshot.builder()
                .name(prometheusName(SeriesNames.GPU_XID_ERRORS, null))
                .help("XID errors reported by the driver");
        for (int i = 0; i < views.size(); i++) {
            Map<String, Long> counts = views.get(i).xidCounts();
            if (counts == null) {
                continue;
            }
            for (Map.Entry<String, Long> count : counts.entrySet()) {
                counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels.get(i).add(KIND, LabelValues.sanitize(count.getKey())))
                        .value(count.getValue() == null ? Double.NaN : count.getValue()).build());
            }
        }
        return counter.build();
    }

    /** {@code trainwatch_gpu_run_info}: 1 per GPU attributed to a run, to join GPU series to runs. */
    private static InfoSnapshot runInfo(List<? extends Gpu> views, List<Labels> labels) {
        InfoSnapshot.Builder info = InfoSnapshot.builder().name(SeriesNames.GPU_RUN_INFO)
                .help("1 for each GPU attributed to a run");
        for (int i = 0; i < views.size(); i++) {
            String runId = views.get(i).runId();
            if (runId != null) {
                info.dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder()
                        .labels(labels.get(i).add(RUN_ID, LabelValues.sanitize(runId))).build());
            }
        }
        return info.build();
    }
}
