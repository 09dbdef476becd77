package dev.trainwatch.exposition;

import java.util.List;

/**
 * Names and label keys of the node series, shared by the collector and each agent's {@code /metrics}: Micrometer's
 * dotted form with the base unit, rendered by {@link GpuSeries#prometheusName} (docs/METRICS.md is the contract).
 */
public final class SeriesNames {

    // ---- label keys of the node series (part of the closed set of docs/METRICS.md) ----
    public static final String HOST = "host";
    public static final String GPU = "gpu";
    public static final String GPU_UUID = "gpu_uuid";
    public static final String RUN_ID = "run_id";
    public static final String KIND = "kind";
    public static final String REASON = "reason";

    // ---- base units ----
    public static final String BYTES = "bytes";
    public static final String RATIO = "ratio";
    public static final String HERTZ = "hertz";
    public static final String WATTS = "watts";
    public static final String CELSIUS = "celsius";
    public static final String JOULES = "joules";
    public static final String BYTES_PER_SECOND = "bytes_per_second";

    // ---- GPU (labels host, gpu, gpu_uuid) ----
    public static final String GPU_MEMORY_USED = "trainwatch.gpu.memory.used";
    public static final String GPU_MEMORY_TOTAL = "trainwatch.gpu.memory.total";
    public static final String GPU_UTILIZATION = "trainwatch.gpu.utilization";
    public static final String GPU_UTILIZATION_MIN = "trainwatch.gpu.utilization.min";
    public static final String GPU_IDLE_FRACTION = "trainwatch.gpu.idle.fraction";
    public static final String GPU_SM_CLOCK = "trainwatch.gpu.sm.clock";
    public static final String GPU_SM_CLOCK_MAX = "trainwatch.gpu.sm.clock.max";
    public static final String GPU_POWER = "trainwatch.gpu.power";
    public static final String GPU_POWER_LIMIT = "trainwatch.gpu.power.limit";
    public static final String GPU_TEMPERATURE = "trainwatch.gpu.temperature";
    /** Plus {@code reason}. */
    public static final String GPU_CLOCK_EVENT_ACTIVE = "trainwatch.gpu.clock.event.active";
    /** Counter; plus {@code kind} (the XID number). */
    public static final String GPU_XID_ERRORS = "trainwatch.gpu.xid.errors";
    public static final String GPU_LOST = "trainwatch.gpu.lost";
    public static final String GPU_ENERGY = "trainwatch.gpu.energy";
    // hardware activity (GPM and field values; see GpuActivity); absent where the GPU cannot say
    public static final String GPU_SM_ACTIVE = "trainwatch.gpu.sm.active";
    public static final String GPU_SM_OCCUPANCY = "trainwatch.gpu.sm.occupancy";
    public static final String GPU_TENSOR_ACTIVE = "trainwatch.gpu.tensor.active";
    public static final String GPU_DRAM_ACTIVE = "trainwatch.gpu.dram.active";
    public static final String GPU_PCIE_RX = "trainwatch.gpu.pcie.rx";
    public static final String GPU_PCIE_TX = "trainwatch.gpu.pcie.tx";
    /** Counter: NVLink data received, all links (NVML's KiB counter in bytes). */
    public static final String GPU_NVLINK_RX = "trainwatch.gpu.nvlink.rx";
    public static final String GPU_NVLINK_TX = "trainwatch.gpu.nvlink.tx";
    /** Plus {@code run_id}; an info type, since Micrometer's naming would strip {@code _info} from a gauge. */
    public static final String GPU_RUN_INFO = "trainwatch_gpu_run";

    // ---- node memory (label host), rendered names ----
    public static final String HOST_MEMORY_AVAILABLE = "trainwatch_host_memory_available_bytes";
    public static final String HOST_MEMORY_TOTAL = "trainwatch_host_memory_total_bytes";
    public static final String HOST_SHM_USED = "trainwatch_host_shm_used_bytes";
    public static final String HOST_SHM_TOTAL = "trainwatch_host_shm_total_bytes";

    /** Clock-event reasons exported, in NVML's bit order; others are accepted but not exported. */
    public static final List<String> CLOCK_EVENT_REASONS = List.of("gpu_idle", "applications_clocks_setting",
            "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
            "hw_power_brake_slowdown", "display_clock_setting");

    private SeriesNames() {
    }
}
