package dev.trainwatch.protocol;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Several readings of one GPU, column by column: what an agent that holds several polls ({@code --ship-every})
 * sends instead of one {@link GpuSample} object per reading, so the GPU's identity travels once and each field's name
 * once per batch rather than once per reading. Reading {@code i} is {@code ts[i]}, {@code memory_used_bytes[i]}, …;
 * every column present has one entry per time stamp, {@code null} where that reading lacks the field, and a column
 * that is null in every reading is left out. The same readings as {@link GpuSample}s, in the same order:
 * {@link #samples()}; the other way: {@link #of(List)}. Immutable.
 *
 * @param index the GPU's NVML index
 * @param uuid  the GPU's UUID
 * @param name  its device name
 * @param pciBusId its PCI bus id
 * @param ts    the readings' times (unix seconds), oldest first
 */
public record GpuReadings(
        int index,
        String uuid,
        String name,
        String pciBusId,
        List<Double> ts,
        List<Long> memoryTotalBytes,
        List<Long> memoryUsedBytes,
        List<Long> memoryReservedBytes,
        List<Long> memoryFreeBytes,
        List<Double> utilizationRatio,
        List<Double> memoryUtilizationRatio,
        List<UtilizationWindow> utilizationWindow,
        List<Long> smClockHz,
        List<Long> smClockMaxHz,
        List<Long> memClockHz,
        List<Long> memClockMaxHz,
        List<List<String>> clockEventReasons,
        List<Double> powerWatts,
        List<Double> powerLimitWatts,
        List<Double> energyJoules,
        List<Double> temperatureCelsius,
        List<Integer> pstate,
        List<List<GpuProcess>> processes,
        List<Boolean> lost,
        List<GpuActivity> activity) {

    /**
     * The readings grouped by GPU (its index, uuid, name and bus id), each GPU's in the order given, GPUs in the order
     * they first appear. Null readings are left out.
     */
    public static List<GpuReadings> of(List<GpuSample> samples) {
        Map<List<Object>, List<GpuSample>> byGpu = new LinkedHashMap<>();
        for (GpuSample s : samples) {
            if (s != null) {
                byGpu.computeIfAbsent(identity(s), k -> new ArrayList<>()).add(s);
            }
        }
        List<GpuReadings> out = new ArrayList<>(byGpu.size());
        for (List<GpuSample> readings : byGpu.values()) {
            out.add(columns(readings));
        }
        return out;
    }

    private static List<Object> identity(GpuSample s) {
        return java.util.Arrays.asList(s.index(), s.uuid(), s.name(), s.pciBusId());
    }

    private static GpuReadings columns(List<GpuSample> r) {
        GpuSample first = r.get(0);
        List<Double> ts = new ArrayList<>(r.size());
        for (GpuSample s : r) {
            ts.add(s.ts());
        }
        return new GpuReadings(first.index(), first.uuid(), first.name(), first.pciBusId(), List.copyOf(ts),
                column(r, GpuSample::memoryTotalBytes), column(r, GpuSample::memoryUsedBytes),
                column(r, GpuSample::memoryReservedBytes), column(r, GpuSample::memoryFreeBytes),
                column(r, GpuSample::utilizationRatio), column(r, GpuSample::memoryUtilizationRatio),
                column(r, GpuSample::utilizationWindow), column(r, GpuSample::smClockHz),
                column(r, GpuSample::smClockMaxHz), column(r, GpuSample::memClockHz),
                column(r, GpuSample::memClockMaxHz), column(r, GpuSample::clockEventReasons),
                column(r, GpuSample::powerWatts), column(r, GpuSample::powerLimitWatts),
                column(r, GpuSample::energyJoules), column(r, GpuSample::temperatureCelsius),
                column(r, GpuSample::pstate), column(r, GpuSample::processes), column(r, GpuSample::lost),
                column(r, GpuSample::activity));
    }

    /** One field of every reading, or null when no reading has it. */
    private static <T> List<T> column(List<GpuSample> readings, Function<GpuSample, T> field) {
        List<T> out = null;
        for (int i = 0; i < readings.size(); i++) {
            T v = field.apply(readings.get(i));
            if (v != null && out == null) {
                out = new ArrayList<>(readings.size());
                for (int j = 0; j < i; j++) {
                    out.add(null);
                }
            }
            if (out != null) {
                out.add(v);
            }
        }
        return out == null ? null : java.util.Collections.unmodifiableList(out);
    }

    /** How many readings: the number of time stamps. */
    public int size() {
        return ts == null ? 0 : ts.size();
    }

    /**
     * The readings as {@link GpuSample}s, oldest first.
     *
     * @throws IllegalArgumentException naming the first column whose length is not the number of time stamps, or a
     *                                  missing or null time stamp
     */
    public List<GpuSample> samples() {
        if (ts == null) {
            throw new IllegalArgumentException("ts is required");
        }
        int n = ts.size();
        check("memory_total_bytes", memoryTotalBytes, n);
        check("memory_used_bytes", memoryUsedBytes, n);
        check("memory_reserved_bytes", memoryReservedBytes, n);
        check("memory_free_bytes", memoryFreeBytes, n);
        check("utilization_ratio", utilizationRatio, n);
        check("memory_utilization_ratio", memoryUtilizationRatio, n);
        check("utilization_window", utilizationWindow, n);
        check("sm_clock_hz", smClockHz, n);
        check("sm_clock_max_hz", smClockMaxHz, n);
        check("mem_clock_hz", memClockHz, n);
        check("mem_clock_max_hz", memClockMaxHz, n);
        check("clock_event_reasons", clockEventReasons, n);
        check("power_watts", powerWatts, n);
        check("power_limit_watts", powerLimitWatts, n);
        check("energy_joules", energyJoules, n);
        check("temperature_celsius", temperatureCelsius, n);
        check("pstate", pstate, n);
        check("processes", processes, n);
        check("lost", lost, n);
        check("activity", activity, n);
        List<GpuSample> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Double t = ts.get(i);
            if (t == null) {
                throw new IllegalArgumentException("ts[" + i + "] is null");
            }
            out.add(new GpuSample(t, index, uuid, name, pciBusId, at(memoryTotalBytes, i), at(memoryUsedBytes, i),
                    at(memoryReservedBytes, i), at(memoryFreeBytes, i), at(utilizationRatio, i),
                    at(memoryUtilizationRatio, i), at(utilizationWindow, i), at(smClockHz, i), at(smClockMaxHz, i),
                    at(memClockHz, i), at(memClockMaxHz, i), at(clockEventReasons, i), at(powerWatts, i),
                    at(powerLimitWatts, i), at(energyJoules, i), at(temperatureCelsius, i), at(pstate, i),
                    at(processes, i), at(lost, i), at(activity, i)));
        }
        return out;
    }

    private static void check(String name, List<?> column, int n) {
        if (column != null && column.size() != n) {
            throw new IllegalArgumentException(name + " has " + column.size() + " values for " + n + " time stamps");
        }
    }

    private static <T> T at(List<T> column, int i) {
        return column == null ? null : column.get(i);
    }

    /**
     * A batch's readings as rows: its {@code gpus}, then those of its {@code gpu_readings}, GPU by GPU. The batch
     * itself when it has no {@code gpu_readings}.
     *
     * @throws IllegalArgumentException as {@link #samples()}, prefixed with {@code gpu_readings[i].}
     */
    public static AgentBatch rows(AgentBatch batch) {
        if (batch.gpuReadings() == null) {
            return batch;
        }
        List<GpuSample> rows = new ArrayList<>();
        if (batch.gpus() != null) {
            rows.addAll(batch.gpus());
        }
        List<GpuReadings> columns = batch.gpuReadings();
        for (int i = 0; i < columns.size(); i++) {
            GpuReadings gpu = columns.get(i);
            if (gpu == null) {
                throw new IllegalArgumentException("gpu_readings[" + i + "] is null");
            }
            try {
                rows.addAll(gpu.samples());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("gpu_readings[" + i + "]." + e.getMessage(), e);
            }
        }
        return new AgentBatch(batch.host(), batch.agentId(), batch.seq(), rows, batch.runs(), batch.events(),
                batch.health(), batch.hostMemory(), batch.sentAt(), null);
    }

    /** The batch with its readings as columns (in {@code gpu_readings}, {@code gpus} left out). */
    public static AgentBatch columns(AgentBatch batch) {
        Objects.requireNonNull(batch, "batch");
        List<GpuSample> rows = batch.gpus() == null ? List.of() : batch.gpus();
        return new AgentBatch(batch.host(), batch.agentId(), batch.seq(), null, batch.runs(), batch.events(),
                batch.health(), batch.hostMemory(), batch.sentAt(), of(rows));
    }
}
