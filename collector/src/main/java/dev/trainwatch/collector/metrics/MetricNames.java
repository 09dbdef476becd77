package dev.trainwatch.collector.metrics;

import java.util.List;

/**
 * Every metric name and label key trainwatch exports, in one place. Names are Micrometer's dotted form with the
 * base unit given separately; the Prometheus registry renders {@code trainwatch.gpu.memory.used} + {@code bytes}
 * as {@code trainwatch_gpu_memory_used_bytes} and appends {@code _total} to counters. The rendered names are the
 * contract of docs/METRICS.md; the golden scrape test pins them.
 */
public final class MetricNames {

    // ---- label keys: the closed set of docs/METRICS.md ----
    public static final String HOST = "host";
    public static final String GPU = "gpu";
    public static final String GPU_UUID = "gpu_uuid";
    public static final String RUN_ID = "run_id";
    public static final String KIND = "kind";
    public static final String SEVERITY = "severity";
    public static final String REASON = "reason";
    public static final String OUTCOME = "outcome";

    // ---- base units ----
    public static final String BYTES = "bytes";
    public static final String RATIO = "ratio";
    public static final String HERTZ = "hertz";
    public static final String WATTS = "watts";
    public static final String CELSIUS = "celsius";
    public static final String SECONDS = "seconds";
    public static final String BATCHES = "batches";
    public static final String RUNS = "runs";

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
    /** Counter: NVML's energy counter since the driver loaded. */
    public static final String GPU_ENERGY = "trainwatch.gpu.energy";
    public static final String JOULES = "joules";
    public static final String BYTES_PER_SECOND = "bytes_per_second";
    // hardware activity (GPM and field values); absent where the GPU cannot say
    /** Share of SMs busy over the agent's poll interval (NVML GPM SM_UTIL), 0–1. */
    public static final String GPU_SM_ACTIVE = "trainwatch.gpu.sm.active";
    /** Resident warps against the maximum (GPM SM_OCCUPANCY), 0–1. */
    public static final String GPU_SM_OCCUPANCY = "trainwatch.gpu.sm.occupancy";
    /** Share of time any tensor pipe was busy (GPM ANY_TENSOR_UTIL), 0–1. */
    public static final String GPU_TENSOR_ACTIVE = "trainwatch.gpu.tensor.active";
    /** DRAM bandwidth used against the maximum (GPM DRAM_BW_UTIL), 0–1. */
    public static final String GPU_DRAM_ACTIVE = "trainwatch.gpu.dram.active";
    public static final String GPU_PCIE_RX = "trainwatch.gpu.pcie.rx";
    public static final String GPU_PCIE_TX = "trainwatch.gpu.pcie.tx";
    /** Counter: NVLink data received, all links (NVML's KiB counter in bytes). */
    public static final String GPU_NVLINK_RX = "trainwatch.gpu.nvlink.rx";
    /** Counter: NVLink data sent, all links. */
    public static final String GPU_NVLINK_TX = "trainwatch.gpu.nvlink.tx";
    /**
     * Plus {@code run_id}. Rendered through the Prometheus client's info type: Micrometer's naming convention
     * would strip the {@code _info} suffix from a gauge.
     */
    public static final String GPU_RUN_INFO = "trainwatch_gpu_run";

    // ---- run (label run_id) ----
    public static final String RUN_STEP = "trainwatch.run.step";
    public static final String RUN_LAST_STEP = "trainwatch.run.last.step";
    public static final String RUN_LAST_STEP_TIMESTAMP = "trainwatch.run.last.step.timestamp";
    public static final String RUN_DATA_WAIT = "trainwatch.run.data.wait";
    public static final String RUN_SAMPLES_PER_SECOND = "trainwatch.run.samples.per.second";
    public static final String RUN_PREDICTED_STEP = "trainwatch.run.predicted.step";
    public static final String RUN_PREDICTED_PEAK_MEMORY = "trainwatch.run.predicted.peak.memory";
    public static final String RUN_PEAK_MEMORY = "trainwatch.run.peak.memory";
    public static final String RUN_STEP_TIME = "trainwatch.run.step.time";
    public static final String RUN_MEMORY_HEADROOM = "trainwatch.run.memory.headroom";
    public static final String RUN_ETA = "trainwatch.run.eta";
    /** Plus {@code kind} and {@code severity}. */
    public static final String RUN_ANOMALY = "trainwatch.run.anomaly";
    public static final String RUN_GPU_UTILIZATION = "trainwatch.run.gpu.utilization";
    public static final String RUN_GPUS = "trainwatch.run.gpus";
    public static final String RUN_ENDED = "trainwatch.run.ended";
    public static final String RUN_LOSS = "trainwatch.run.loss";
    /** Counter. */
    public static final String RUN_LOSS_NONFINITE = "trainwatch.run.loss.nonfinite.reports";
    public static final String RUN_MFU = "trainwatch.run.mfu";
    public static final String RUN_HFU = "trainwatch.run.hfu";
    public static final String RUN_PREDICTED_MFU = "trainwatch.run.predicted.mfu";
    /** Hardware MFU: the run's GPUs' mean tensor-pipe activity (GPM). */
    public static final String RUN_HARDWARE_MFU = "trainwatch.run.hardware.mfu";
    public static final String RUN_GOODPUT = "trainwatch.run.goodput";
    /** Counter; plus {@code reason} (the goodput parts). */
    public static final String RUN_WALL = "trainwatch.run.wall";
    /** Counter. */
    public static final String RUN_ENERGY = "trainwatch.run.energy";
    /** Counter. */
    public static final String RUN_GPU_TIME = "trainwatch.run.gpu";
    public static final String RUN_COST = "trainwatch.run.cost";
    public static final String RUN_PROJECTED_COST = "trainwatch.run.projected.cost";
    public static final String RUN_PROJECTED_ENERGY = "trainwatch.run.projected.energy";
    /** The {@code reason} values of {@link #RUN_WALL}, in the order the page and docs list them. */
    public static final List<String> WALL_REASONS = List.of("productive", "startup", "data_wait", "encoding", "stall",
            "checkpoint", "evaluation", "lost_work", "idle");

    // ---- self ----
    /** Label host. */
    public static final String AGENT_LAST_SEEN = "trainwatch.agent.last.seen.timestamp";
    public static final String AGENT_POLL_DURATION = "trainwatch.agent.poll.duration";
    public static final String AGENT_READ_ERRORS = "trainwatch.agent.read.errors";
    public static final String AGENT_SPOOL_DEPTH = "trainwatch.agent.spool.depth";
    public static final String AGENT_DROPPED_BATCHES = "trainwatch.agent.dropped.batches";
    public static final String AGENT_DELIVERY_ALIVE = "trainwatch.agent.delivery.alive";
    public static final String AGENT_DELIVERY_ERRORS = "trainwatch.agent.delivery.errors";
    public static final String AGENT_SPOOL = "trainwatch.agent.spool";
    public static final String AGENT_SPOOL_IN_MEMORY = "trainwatch.agent.spool.in.memory";
    public static final String AGENT_SPOOL_REJECTED = "trainwatch.agent.spool.rejected";
    public static final String AGENT_LOG_READABLE = "trainwatch.agent.log.readable";
    public static final String AGENT_CLOCK_OFFSET = "trainwatch.agent.clock.offset";
    /** Label outcome, one of {@link #INGEST_OUTCOMES}. */
    public static final String INGEST_REQUESTS = "trainwatch.ingest.requests";
    /** Evaluations in which a detector threw, by anomaly kind (a bug: the detector is skipped, ingest goes on). */
    public static final String DETECTOR_ERRORS = "trainwatch.detector.errors";
    public static final String DETECTOR_EVALUATION = "trainwatch.detector.evaluation";
    /** Label outcome, one of {@link #ALERT_OUTCOMES}. */
    public static final String ALERT_DELIVERIES = "trainwatch.alert.deliveries";

    /** Runs whose changed summary waits to be written to the history (only with a data directory). */
    public static final String HISTORY_PENDING = "trainwatch.history.pending";
    /** History transactions of run summaries; label outcome, one of {@link #HISTORY_WRITE_OUTCOMES}. */
    public static final String HISTORY_WRITES = "trainwatch.history.writes";
    /** Run summaries the history dropped because too many runs already waited to be written. */
    public static final String HISTORY_DROPPED_SUMMARIES = "trainwatch.history.dropped.summaries";

    /** Entries tracked against a limit; label reason (runs, gpus, agents, ranks). */
    public static final String LIMIT_ENTRIES = "trainwatch.limit.entries";
    /** The limit itself; label reason. */
    public static final String LIMIT_MAX_ENTRIES = "trainwatch.limit.max.entries";
    /** New entries refused because every slot held a live one; label reason. */
    public static final String LIMIT_REFUSED = "trainwatch.limit.refused";
    /** Ended, silent or spec-only entries forgotten to make room; label reason. */
    public static final String LIMIT_FORGOTTEN = "trainwatch.limit.forgotten";

    /** Values of {@code outcome} on {@link #INGEST_REQUESTS}; all are pre-registered at 0. */
    public static final List<String> INGEST_OUTCOMES = List.of("ok", "duplicate", "bad_request", "unauthorized",
            "too_large", "unsupported_media_type", "unprocessable", "not_found", "limited");
    /** Values of {@code outcome} on {@link #ALERT_DELIVERIES}. */
    public static final List<String> ALERT_OUTCOMES = List.of("ok", "retry", "failed");
    /** Values of {@code outcome} on {@link #HISTORY_WRITES}. */
    public static final List<String> HISTORY_WRITE_OUTCOMES = List.of("ok", "failed");

    /**
     * Clock-event reasons exported, in NVML's bit order. Reasons outside this set are accepted on ingest but not
     * exported, so a newer driver cannot add series dashboards do not know.
     */
    public static final List<String> CLOCK_EVENT_REASONS = List.of("gpu_idle", "applications_clocks_setting",
            "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
            "hw_power_brake_slowdown", "display_clock_setting");

    private MetricNames() {
    }
}
