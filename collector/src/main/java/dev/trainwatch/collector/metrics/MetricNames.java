package dev.trainwatch.collector.metrics;

import dev.trainwatch.exposition.SeriesNames;
import java.util.List;

/**
 * Every metric name and label key trainwatch exports, in one place, in Micrometer's dotted form with the base unit
 * apart ({@code trainwatch.gpu.memory.used} + {@code bytes} renders as {@code trainwatch_gpu_memory_used_bytes}).
 * The rendered names are the contract of docs/METRICS.md, pinned by the golden scrape test; the per-GPU and host
 * series' names are {@link SeriesNames}, shared with the agents' exporters.
 */
public final class MetricNames {

    // ---- label keys: the closed set of docs/METRICS.md ----
    public static final String HOST = SeriesNames.HOST;
    public static final String RUN_ID = SeriesNames.RUN_ID;
    public static final String KIND = SeriesNames.KIND;
    public static final String SEVERITY = "severity";
    public static final String REASON = SeriesNames.REASON;
    public static final String OUTCOME = "outcome";

    // ---- base units ----
    public static final String BYTES = SeriesNames.BYTES;
    public static final String RATIO = SeriesNames.RATIO;
    public static final String SECONDS = "seconds";
    public static final String BATCHES = "batches";
    public static final String RUNS = "runs";
    public static final String JOULES = SeriesNames.JOULES;

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
    public static final String RUN_ANOMALY = "trainwatch.run.anomaly";
    public static final String RUN_GPU_UTILIZATION = "trainwatch.run.gpu.utilization";
    public static final String RUN_GPUS = "trainwatch.run.gpus";
    public static final String RUN_ENDED = "trainwatch.run.ended";
    public static final String RUN_LOSS = "trainwatch.run.loss";
    public static final String RUN_LOSS_NONFINITE = "trainwatch.run.loss.nonfinite.reports";
    public static final String RUN_MFU = "trainwatch.run.mfu";
    public static final String RUN_HFU = "trainwatch.run.hfu";
    public static final String RUN_PREDICTED_MFU = "trainwatch.run.predicted.mfu";
    public static final String RUN_HARDWARE_MFU = "trainwatch.run.hardware.mfu";
    public static final String RUN_GOODPUT = "trainwatch.run.goodput";
    public static final String RUN_WALL = "trainwatch.run.wall";
    public static final String RUN_ENERGY = "trainwatch.run.energy";
    public static final String RUN_GPU_TIME = "trainwatch.run.gpu";
    public static final String RUN_COST = "trainwatch.run.cost";
    public static final String RUN_PROJECTED_COST = "trainwatch.run.projected.cost";
    public static final String RUN_PROJECTED_ENERGY = "trainwatch.run.projected.energy";
    /** The {@code reason} values of {@link #RUN_WALL}, in the order the page and docs list them. */
    public static final List<String> WALL_REASONS = List.of("productive", "startup", "data_wait", "encoding", "stall",
            "checkpoint", "evaluation", "lost_work", "idle");

    // ---- self ----
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
    public static final String INGEST_REQUESTS = "trainwatch.ingest.requests";
    public static final String DETECTOR_ERRORS = "trainwatch.detector.errors";
    public static final String DETECTOR_EVALUATION = "trainwatch.detector.evaluation";
    public static final String ALERT_DELIVERIES = "trainwatch.alert.deliveries";
    public static final String HISTORY_PENDING = "trainwatch.history.pending";
    public static final String HISTORY_WRITES = "trainwatch.history.writes";
    public static final String HISTORY_DROPPED_SUMMARIES = "trainwatch.history.dropped.summaries";
    public static final String LIMIT_ENTRIES = "trainwatch.limit.entries";
    public static final String LIMIT_MAX_ENTRIES = "trainwatch.limit.max.entries";
    public static final String LIMIT_REFUSED = "trainwatch.limit.refused";
    public static final String LIMIT_FORGOTTEN = "trainwatch.limit.forgotten";

    /** Values of {@code outcome} on {@link #INGEST_REQUESTS}; all are pre-registered at 0. */
    public static final List<String> INGEST_OUTCOMES = List.of("ok", "duplicate", "bad_request", "unauthorized",
            "too_large", "unsupported_media_type", "unprocessable", "not_found", "limited");
    /** Values of {@code outcome} on {@link #ALERT_DELIVERIES}. */
    public static final List<String> ALERT_OUTCOMES = List.of("ok", "retry", "failed");

    private MetricNames() {
    }
}
