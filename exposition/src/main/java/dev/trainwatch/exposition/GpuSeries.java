package dev.trainwatch.exposition;

import static dev.trainwatch.exposition.SeriesNames.GPU;
import static dev.trainwatch.exposition.SeriesNames.GPU_UUID;
import static dev.trainwatch.exposition.SeriesNames.HOST;
import static dev.trainwatch.exposition.SeriesNames.KIND;
import static dev.trainwatch.exposition.SeriesNames.REASON;
import static dev.trainwatch.exposition.SeriesNames.RUN_ID;

import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
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
     * A GPU as exported: where it is, its newest reading, the run it is attributed to and its XID counts. The
     * collector's {@code GpuView} is one; an agent makes one per GPU of its node.
     */
    public interface Gpu {
        /** The GPU's UUID (label {@code gpu_uuid}). */
        String uuid();

        /** The node (label {@code host}). */
        String host();

        /** The run the GPU is attributed to, or null. */
        String runId();

        /** The newest reading; a GPU without one has no series. */
        GpuSample latest();

        /** XID errors seen, by XID number as a string, or null for none. */
        Map<String, Long> xidCounts();
    }

    private final Supplier<? extends Collection<? extends Gpu>> gpus;
    private final List<Family> gauges = new ArrayList<>();
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
                s -> window(s) == null ? null : window(s).minRatio());
        gauge(SeriesNames.GPU_IDLE_FRACTION, SeriesNames.RATIO,
                "Share of buffered utilisation samples at or below 5% since the previous poll (0-1)",
                s -> window(s) == null ? null : window(s).idleFraction());
        gauge(SeriesNames.GPU_SM_CLOCK, SeriesNames.HERTZ, "Current SM clock", s -> s.smClockHz());
        gauge(SeriesNames.GPU_SM_CLOCK_MAX, SeriesNames.HERTZ, "Maximum SM clock", s -> s.smClockMaxHz());
        gauge(SeriesNames.GPU_POWER, SeriesNames.WATTS, "Power draw", s -> s.powerWatts());
        gauge(SeriesNames.GPU_POWER_LIMIT, SeriesNames.WATTS, "Enforced power limit", s -> s.powerLimitWatts());
        gauge(SeriesNames.GPU_TEMPERATURE, SeriesNames.CELSIUS, "Core temperature", s -> s.temperatureCelsius());
        gauge(SeriesNames.GPU_LOST, null, "1 while NVML reports the GPU lost",
                s -> Boolean.TRUE.equals(s.lost()) ? 1 : 0);
        gauge(SeriesNames.GPU_SM_ACTIVE, SeriesNames.RATIO,
                "Share of SMs busy over the agent's poll interval (GPM, 0-1)", s -> ratio(s, GpuActivity::smActiveRatio));
        gauge(SeriesNames.GPU_SM_OCCUPANCY, SeriesNames.RATIO,
                "Resident warps against the SMs' maximum over the poll interval (GPM, 0-1)",
                s -> ratio(s, GpuActivity::smOccupancyRatio));
        gauge(SeriesNames.GPU_TENSOR_ACTIVE, SeriesNames.RATIO,
                "Share of time any tensor pipe was busy over the poll interval (GPM, 0-1)",
                s -> ratio(s, GpuActivity::tensorActiveRatio));
        gauge(SeriesNames.GPU_DRAM_ACTIVE, SeriesNames.RATIO,
                "DRAM bandwidth used against the maximum over the poll interval (GPM, 0-1)",
                s -> ratio(s, GpuActivity::dramActiveRatio));
        gauge(SeriesNames.GPU_PCIE_RX, SeriesNames.BYTES_PER_SECOND,
                "PCIe traffic into the GPU (GPM over the poll interval, else NVML's 20 ms window)",
                s -> rate(s, GpuActivity::pcieRxBytesPerSecond));
        gauge(SeriesNames.GPU_PCIE_TX, SeriesNames.BYTES_PER_SECOND,
                "PCIe traffic out of the GPU (GPM over the poll interval, else NVML's 20 ms window)",
                s -> rate(s, GpuActivity::pcieTxBytesPerSecond));
        names.add(prometheusName(SeriesNames.GPU_CLOCK_EVENT_ACTIVE, null));
        names.add(prometheusName(SeriesNames.GPU_XID_ERRORS, null));
        names.add(SeriesNames.GPU_RUN_INFO);
        names.add(prometheusName(SeriesNames.GPU_ENERGY, SeriesNames.JOULES));
        names.add(prometheusName(SeriesNames.GPU_NVLINK_RX, SeriesNames.BYTES));
        names.add(prometheusName(SeriesNames.GPU_NVLINK_TX, SeriesNames.BYTES));
    }

    /** An activity ratio in 0–1, else no series (a hostile or broken agent's value is not exported). */
    private static Double ratio(GpuSample s, Function<GpuActivity, Double> field) {
        Double v = s.activity() == null || Boolean.TRUE.equals(s.lost()) ? null : field.apply(s.activity());
        return v != null && v >= 0 && v <= 1 ? v : null;
    }

    /** A finite non-negative rate, else no series. */
    private static Double rate(GpuSample s, Function<GpuActivity, Double> field) {
        Double v = s.activity() == null || Boolean.TRUE.equals(s.lost()) ? null : field.apply(s.activity());
        return v != null && Double.isFinite(v) && v >= 0 ? v : null;
    }

    /** One gauge over the GPUs' newest samples; a null reading means no series for that GPU. */
    private record Family(String name, String help, Function<GpuSample, Number> reading) {
    }

    private void gauge(String name, String unit, String help, Function<GpuSample, Number> reading) {
        Family family = new Family(prometheusName(name, unit), help, reading);
        gauges.add(family);
        names.add(family.name());
    }

    /** Micrometer's Prometheus name for {@code name} with {@code unit}: dots to underscores, the unit appended once. */
    public static String prometheusName(String name, String unit) {
        String base = name.replace('.', '_');
        return unit == null || base.endsWith('_' + unit) ? base : base + '_' + unit;
    }

    private static UtilizationWindow window(GpuSample sample) {
        return sample.utilizationWindow();
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
        List<MetricSnapshot> snapshots = new ArrayList<>(gauges.size() + 3);
        for (Family family : gauges) {
            GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(family.name()).help(family.help());
            for (int i = 0; i < views.size(); i++) {
                Number value = family.reading().apply(views.get(i).latest());
                if (value != null) {
                    gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                            .labels(labels.get(i)).value(value.doubleValue()).build());
                }
            }
            snapshots.add(gauge.build());
        }
        snapshots.add(clockEvents(views, labels));
        snapshots.add(xidErrors(views, labels));
        snapshots.add(runInfo(views, labels));
        snapshots.add(energy(views, labels));
        snapshots.add(nvlink(views, labels, SeriesNames.GPU_NVLINK_RX, "NVLink data received, all links (NVML's counter)",
                GpuActivity::nvlinkRxBytes));
        snapshots.add(nvlink(views, labels, SeriesNames.GPU_NVLINK_TX, "NVLink data sent, all links (NVML's counter)",
                GpuActivity::nvlinkTxBytes));
        return new MetricSnapshots(snapshots);
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

    /** {@code trainwatch_gpu_energy_joules_total}: NVML's energy counter, for GPUs that report it. */
    private static CounterSnapshot energy(List<? extends Gpu> views, List<Labels> labels) {
        CounterSnapshot.Builder counter = CounterSnapshot.builder()
                .name(prometheusName(SeriesNames.GPU_ENERGY, SeriesNames.JOULES))
                .help("Energy used since the driver loaded (NVML's counter)");
        for (int i = 0; i < views.size(); i++) {
            GpuSample latest = views.get(i).latest();
            Double joules = latest.energyJoules();
            if (joules != null && Double.isFinite(joules) && joules >= 0 && !Boolean.TRUE.equals(latest.lost())) {
                counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels.get(i)).value(joules).build());
            }
        }
        return counter.build();
    }

    /** {@code trainwatch_gpu_nvlink_{rx,tx}_bytes_total}: NVML's NVLink data counters, for GPUs with NVLink. */
    private static CounterSnapshot nvlink(List<? extends Gpu> views, List<Labels> labels, String name, String help,
                                          Function<GpuActivity, Long> field) {
        CounterSnapshot.Builder counter = CounterSnapshot.builder()
                .name(prometheusName(name, SeriesNames.BYTES)).help(help);
        for (int i = 0; i < views.size(); i++) {
            GpuSample latest = views.get(i).latest();
            Long bytes = latest.activity() == null || Boolean.TRUE.equals(latest.lost()) ? null
                    : field.apply(latest.activity());
            if (bytes != null && bytes >= 0) {
                counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(labels.get(i)).value(bytes).build());
            }
        }
        return counter.build();
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
