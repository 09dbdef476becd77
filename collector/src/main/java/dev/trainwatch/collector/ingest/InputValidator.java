package dev.trainwatch.collector.ingest;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.EventKind;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

/**
 * Range checks on decoded requests, before anything reaches the fleet: a value no GPU or run can produce is refused
 * with the field named; identifiers that become metric labels are held to a small alphabet and length. Thread-safe.
 */
public final class InputValidator {

    /** Characters allowed in a run id (they become the {@code run_id} label and a URL path segment). */
    public static final Pattern RUN_ID = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    /** Longest label value (host, GPU UUID, agent id, run id). */
    public static final int MAX_LABEL_LENGTH = 128;

    private static final Pattern SNAKE_NAME = Pattern.compile("[a-z0-9_]{1,64}");

    private static final double ONE_DAY_S = 86_400;
    /** Unix seconds up to year 2286: generous, but rules out milliseconds sent as seconds. */
    private static final double MAX_TS = 1e10;
    private static final long MAX_MEMORY_BYTES = 1L << 50; // 1 PiB: no single GPU comes close
    private static final long MAX_CLOCK_HZ = 10_000_000_000L;
    private static final double MAX_POWER_W = 10_000;
    private static final double MAX_ENERGY_J = 1e15;
    private static final int MAX_INDEX = 1_023;
    private static final int MAX_LIST = 4_096;
    /** More memory than any node has (64 PiB): a larger reading is a corrupted one. */
    private static final long MAX_HOST_BYTES = 1L << 56;
    private static final int MAX_PROCESSES = 1_024;
    private static final int MAX_RUNS_PER_BATCH = 1_024;
    private static final int MAX_EVENTS_PER_BATCH = 4_096;
    private static final long MAX_STEP = 1_000_000_000_000L;
    private static final long MAX_PID = 1L << 32;
    /** Largest batch {@code seq}: 2^53 - 1, the largest integer every JSON reader holds exactly. */
    public static final long MAX_SEQ = (1L << 53) - 1;
    /** Longest step {@code source} (the agent sends 12 hex digits, a dot and a small number). */
    private static final int MAX_SOURCE_LENGTH = 64;
    private static final Pattern SOURCE = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");

    private final CollectorConfig.Limits limits;

    public InputValidator(CollectorConfig.Limits limits) {
        this.limits = limits;
    }

    /** Checks a run id from a URL or a batch: 422 naming the rule broken. */
    public static String requireRunId(Object field, String runId) {
        if (runId == null || runId.isEmpty()) {
            throw ApiError.unprocessable(field + " is missing");
        }
        if (runId.length() > MAX_LABEL_LENGTH) {
            throw ApiError.unprocessable(field + " is longer than " + MAX_LABEL_LENGTH + " characters");
        }
        if (!RUN_ID.matcher(runId).matches()) {
            throw ApiError.unprocessable(field + " may only contain A-Z a-z 0-9 _ . : -, got '"
                    + BodyDecoder.printable(runId, 40) + "'");
        }
        if (runId.equals(".") || runId.equals("..")) {
            throw ApiError.unprocessable(field + " may not be '" + runId + "'");
        }
        return runId;
    }

    /** Checks a label value from a URL (printable ASCII, at most {@value #MAX_LABEL_LENGTH} characters). */
    public static String requireLabel(String field, String value) {
        label(field, "", value, true);
        return value;
    }

    /** Checks an agent batch in full; the batch is accepted or refused as a whole. */
    public void check(AgentBatch batch) {
        label("host", "", batch.host(), true);
        label("agent_id", "", batch.agentId(), true);
        if (batch.seq() < 0 || batch.seq() > MAX_SEQ) {
            // A larger seq would hold every real batch of that agent id below it as a "replay".
            throw ApiError.unprocessable("seq must be between 0 and 2^53-1 (" + MAX_SEQ + "), got " + batch.seq());
        }
        if (batch.sentAt() != null) {
            timestamp("sent_at", "", batch.sentAt());
        }
        List<GpuSample> gpus = batch.gpus();
        if (gpus != null) {
            if (gpus.size() > limits.maxGpuSamples()) {
                throw ApiError.unprocessable("gpus has " + gpus.size() + " samples, more than the limit of "
                        + limits.maxGpuSamples() + " per batch; send smaller batches");
            }
            for (int i = 0; i < gpus.size(); i++) {
                check(path("", "gpus[", i, "]"), gpus.get(i));
            }
        }
        each("", "runs", batch.runs(), MAX_RUNS_PER_BATCH, InputValidator::check);
        each("", "events", batch.events(), MAX_EVENTS_PER_BATCH, InputValidator::check);
        if (batch.health() != null) {
            check("health", batch.health());
        }
        if (batch.hostMemory() != null) {
            check("host_memory", batch.hostMemory());
        }
    }

    private static void check(Object at, GpuSample gpu) {
        notNull(at, gpu);
        timestamp(at, ".ts", gpu.ts());
        range(at, ".index", gpu.index(), 0, MAX_INDEX);
        label(at, ".uuid", gpu.uuid(), true);
        text(at, ".name", gpu.name(), 256);
        text(at, ".pci_bus_id", gpu.pciBusId(), 64);
        bytes(at, ".memory_total_bytes", gpu.memoryTotalBytes());
        bytes(at, ".memory_used_bytes", gpu.memoryUsedBytes());
        bytes(at, ".memory_reserved_bytes", gpu.memoryReservedBytes());
        bytes(at, ".memory_free_bytes", gpu.memoryFreeBytes());
        if (gpu.memoryTotalBytes() != null && gpu.memoryUsedBytes() != null
                && gpu.memoryUsedBytes() > gpu.memoryTotalBytes()) {
            throw ApiError.unprocessable(at + ".memory_used_bytes (" + gpu.memoryUsedBytes()
                    + ") exceeds memory_total_bytes (" + gpu.memoryTotalBytes() + ")");
        }
        ratio(at, ".utilization_ratio", gpu.utilizationRatio());
        ratio(at, ".memory_utilization_ratio", gpu.memoryUtilizationRatio());
        UtilizationWindow window = gpu.utilizationWindow();
        if (window != null) {
            range(at, ".utilization_window.count", window.count(), 0, 1_000_000);
            ratio(at, ".utilization_window.min_ratio", window.minRatio());
            ratio(at, ".utilization_window.mean_ratio", window.meanRatio());
            ratio(at, ".utilization_window.max_ratio", window.maxRatio());
            ratio(at, ".utilization_window.idle_fraction", window.idleFraction());
            timestamp(at, ".utilization_window.from_ts", window.fromTs());
            timestamp(at, ".utilization_window.to_ts", window.toTs());
        }
        hertz(at, ".sm_clock_hz", gpu.smClockHz());
        hertz(at, ".sm_clock_max_hz", gpu.smClockMaxHz());
        hertz(at, ".mem_clock_hz", gpu.memClockHz());
        hertz(at, ".mem_clock_max_hz", gpu.memClockMaxHz());
        each(at, ".clock_event_reasons", gpu.clockEventReasons(), 64, (r, reason) -> {
            if (reason == null || !SNAKE_NAME.matcher(reason).matches()) {
                throw ApiError.unprocessable(r + " must be a lower_snake_case name of at most 64 characters");
            }
        });
        range(at, ".power_watts", gpu.powerWatts(), 0, MAX_POWER_W);
        range(at, ".power_limit_watts", gpu.powerLimitWatts(), 0, MAX_POWER_W);
        range(at, ".energy_joules", gpu.energyJoules(), 0, MAX_ENERGY_J);
        range(at, ".temperature_celsius", gpu.temperatureCelsius(), -60, 200);
        optionalRange(at, ".pstate", gpu.pstate(), 0, 32);
        if (gpu.activity() != null) {
            check(path(at, ".activity"), gpu.activity());
        }
        each(at, ".processes", gpu.processes(), MAX_PROCESSES, InputValidator::check);
    }

    private static void check(Object a, GpuActivity activity) {
        range(a, ".window_seconds", activity.windowSeconds(), 0, 86_400);
        ratio(a, ".sm_active_ratio", activity.smActiveRatio());
        ratio(a, ".sm_occupancy_ratio", activity.smOccupancyRatio());
        ratio(a, ".tensor_active_ratio", activity.tensorActiveRatio());
        ratio(a, ".tensor_hmma_active_ratio", activity.tensorHmmaActiveRatio());
        ratio(a, ".dram_active_ratio", activity.dramActiveRatio());
        // 1 PB/s is far beyond any link; counters below 2^63 bytes
        range(a, ".pcie_rx_bytes_per_second", activity.pcieRxBytesPerSecond(), 0, 1e15);
        range(a, ".pcie_tx_bytes_per_second", activity.pcieTxBytesPerSecond(), 0, 1e15);
        range(a, ".nvlink_rx_bytes_per_second", activity.nvlinkRxBytesPerSecond(), 0, 1e15);
        range(a, ".nvlink_tx_bytes_per_second", activity.nvlinkTxBytesPerSecond(), 0, 1e15);
        optionalRange(a, ".nvlink_rx_bytes", activity.nvlinkRxBytes(), 0, Long.MAX_VALUE);
        optionalRange(a, ".nvlink_tx_bytes", activity.nvlinkTxBytes(), 0, Long.MAX_VALUE);
    }

    private static void check(Object p, GpuProcess process) {
        notNull(p, process);
        range(p, ".pid", process.pid(), 0, MAX_PID);
        bytes(p, ".used_memory_bytes", process.usedMemoryBytes());
        ratio(p, ".sm_utilization_ratio", process.smUtilizationRatio());
        ratio(p, ".memory_utilization_ratio", process.memoryUtilizationRatio());
    }

    private static void check(Object at, RunAttribution run) {
        notNull(at, run);
        requireRunId(path(at, ".run_id"), run.runId());
        // An alias is what a user may PUT a spec under: it must be a valid run id.
        each(at, ".aliases", run.aliases(), 16, InputValidator::requireRunId);
        each(at, ".pids", run.pids(), MAX_LIST, (p, pid) -> {
            notNull(p, pid);
            range(p, "", pid, 0, MAX_PID);
        });
        gpuUuids(at, run.gpuUuids());
        each(at, ".ranks", run.ranks(), MAX_LIST, InputValidator::check);
        text(at, ".master_addr", run.masterAddr(), 256);
    }

    private static void check(Object r, RankInfo rank) {
        notNull(r, rank);
        range(r, ".pid", rank.pid(), 0, MAX_PID);
        optionalRange(r, ".rank", rank.rank(), 0, 1_000_000);
        optionalRange(r, ".local_rank", rank.localRank(), 0, 1_000_000);
        optionalRange(r, ".world_size", rank.worldSize(), 1, 1_000_000);
        text(r, ".state", rank.state(), 4);
        range(r, ".cpu_seconds", rank.cpuSeconds(), 0, 1e12);
        range(r, ".workers_cpu_seconds", rank.workersCpuSeconds(), 0, 1e12);
        optionalRange(r, ".rss_bytes", rank.rssBytes(), 0, MAX_HOST_BYTES);
        optionalRange(r, ".workers_rss_bytes", rank.workersRssBytes(), 0, MAX_HOST_BYTES);
        optionalRange(r, ".workers", rank.workers(), 0, 1_000_000);
        gpuUuids(r, rank.gpuUuids());
    }

    private static void gpuUuids(Object at, List<String> uuids) {
        each(at, ".gpu_uuids", uuids, MAX_INDEX + 1, (u, uuid) -> label(u, "", uuid, true));
    }

    private static void check(Object at, AgentEvent event) {
        notNull(at, event);
        timestamp(at, ".ts", event.ts());
        if (event.kind() == null || !SNAKE_NAME.matcher(event.kind()).matches()) {
            throw ApiError.unprocessable(at + ".kind must be a lower_snake_case name of at most 64 characters");
        }
        label(at, ".gpu_uuid", event.gpuUuid(), false);
        optionalRange(at, ".xid", event.xid(), 0, 65_535);
        if (event.eventKind() == EventKind.XID && (event.xid() == null || event.gpuUuid() == null)) {
            throw ApiError.unprocessable(at + " is an xid event without xid and gpu_uuid");
        }
        if (event.runId() != null) {
            requireRunId(path(at, ".run_id"), event.runId());
        }
        text(at, ".message", event.message(), 1_024);
        if (event.failure() != null) {
            check(path(at, ".failure"), event.failure());
        }
        if (event.ending() != null) {
            text(at, ".ending.log", event.ending().log(), 4_096);
            text(at, ".ending.last_line", event.ending().lastLine(), 2_000);
            each(at, ".ending.outputs", event.ending().outputs(), 8, (o, output) -> text(o, "", output, 4_096));
        }
        if (event.progress() != null) {
            range(at, ".progress.done", event.progress().done(), 0, Long.MAX_VALUE);
            if (event.progress().total() != null) {
                range(at, ".progress.total", event.progress().total(), 0, Long.MAX_VALUE);
            }
            range(at, ".progress.per_second", event.progress().perSecond(), 0, 1e12);
        }
        if (event.count() != null) {
            range(at, ".count", event.count(), 0, Long.MAX_VALUE);
        }
    }

    /** The failure causes of the contract. */
    private static final Set<String> FAILURE_CAUSES = Set.of("cuda_oom", "nccl_timeout", "xid",
            "gpu_lost", "signal", "host_oom", "exception", "unknown");

    private static void check(Object at, RunFailure f) {
        if (f.cause() == null || !FAILURE_CAUSES.contains(f.cause())) {
            throw ApiError.unprocessable(at + ".cause must be one of " + String.join(", ",
                    new TreeSet<>(FAILURE_CAUSES)));
        }
        text(at, ".summary", f.summary(), 1_024);
        optionalRange(at, ".exit_code", f.exitCode(), -255, 1_000);
        optionalRange(at, ".signal", f.signal(), 0, 255);
        optionalRange(at, ".rank", f.rank(), 0, 1_000_000);
        each(at, ".lines", f.lines(), 50, (l, line) -> text(l, "", line, 2_000));
        if (f.detail() != null) {
            if (f.detail().size() > 32) {
                throw ApiError.unprocessable(at + ".detail has " + f.detail().size() + " entries, at most 32");
            }
            for (Map.Entry<String, Object> e : f.detail().entrySet()) {
                text(at, ".detail key", e.getKey(), 64);
                Object v = e.getValue();
                if (v instanceof Number n) {
                    finite(at + ".detail." + e.getKey(), "", n.doubleValue());
                } else if (v instanceof String str) {
                    text(at + ".detail." + e.getKey(), "", str, 500);
                } else if (v != null && !(v instanceof Boolean)) {
                    throw ApiError.unprocessable(at + ".detail." + e.getKey() + " must be a number, a string or a "
                            + "boolean");
                }
            }
        }
    }

    private static void check(Object at, HostMemory m) {
        timestamp(at, ".ts", m.ts());
        for (Object[] field : new Object[][] {{"mem_total_bytes", m.memTotalBytes()},
                {"mem_available_bytes", m.memAvailableBytes()}, {"swap_used_bytes", m.swapUsedBytes()},
                {"shm_total_bytes", m.shmTotalBytes()}, {"shm_used_bytes", m.shmUsedBytes()}}) {
            if (field[1] != null) {
                range(at + "." + field[0], "", (Long) field[1], 0, MAX_HOST_BYTES);
            }
        }
    }

    private static void check(Object at, AgentHealth health) {
        range(at, ".poll_duration_seconds", health.pollDurationSeconds(), 0, 3_600);
        optionalRange(at, ".failed_reads", health.failedReads(), 0, Long.MAX_VALUE);
        optionalRange(at, ".spool_depth", health.spoolDepth(), 0, Long.MAX_VALUE);
        optionalRange(at, ".spool_bytes", health.spoolBytes(), 0, Long.MAX_VALUE);
        optionalRange(at, ".dropped_batches", health.droppedBatches(), 0, Long.MAX_VALUE);
        range(at, ".interval_seconds", health.intervalSeconds(), 0, 3_600);
        optionalRange(at, ".rejected_spool_entries", health.rejectedSpoolEntries(), 0, Long.MAX_VALUE);
        optionalRange(at, ".delivery_errors", health.deliveryErrors(), 0, Long.MAX_VALUE);
        text(at, ".last_error", health.lastError(), 2_000);
    }

    /** Checks the step events of one request. */
    public void check(List<StepEvent> steps) {
        if (steps.isEmpty()) {
            throw ApiError.unprocessable("no step events in the body");
        }
        if (steps.size() > limits.maxStepEvents()) {
            throw ApiError.unprocessable(steps.size() + " step events is more than the limit of "
                    + limits.maxStepEvents() + " per request");
        }
        boolean single = steps.size() == 1;
        for (int i = 0; i < steps.size(); i++) {
            check(single ? "" : path("", "[", i, "]."), steps.get(i));
        }
    }

    /** The steps a batch carries ({@code run_steps}) by a steps request's rules; apart, so bad steps cost only themselves. */
    public void checkSteps(AgentBatch batch) {
        List<RunSteps> groups = batch.runSteps();
        if (groups == null) {
            return;
        }
        size("run_steps", "", groups, MAX_RUNS_PER_BATCH);
        long reports = 0;
        for (int i = 0; i < groups.size(); i++) {
            RunSteps group = groups.get(i);
            notNull(path("", "run_steps[", i, "]"), group);
            requireRunId(path("", "run_steps[", i, "].run_id"), group.runId());
            if (group.steps() == null) {
                throw ApiError.unprocessable("run_steps[" + i + "].steps is missing");
            }
            reports += group.steps().size();
            if (reports > limits.maxStepEvents()) {
                throw ApiError.unprocessable("run_steps holds more than " + limits.maxStepEvents()
                        + " step events, the limit per request");
            }
            for (int k = 0; k < group.steps().size(); k++) {
                Object at = path(path("", "run_steps[", i, "].steps["), "", k, "]");
                notNull(at, group.steps().get(k));
                check(path(at, "."), group.steps().get(k));
            }
        }
    }

    private static void check(Object at, StepEvent step) {
        if (step.step() == null) {
            throw ApiError.unprocessable(at + "step is missing");
        }
        range(at, "step", step.step(), 0, MAX_STEP);
        if (step.timeS() == null) {
            throw ApiError.unprocessable(at + "time_s is missing");
        }
        finite(at, "time_s", step.timeS());
        if (step.timeS() <= 0 || step.timeS() > ONE_DAY_S) {
            throw ApiError.unprocessable(at + "time_s must be > 0 and at most one day (86400), got " + step.timeS());
        }
        range(at, "data_time_s", step.dataTimeS(), 0, ONE_DAY_S);
        range(at, "model_time_s", step.modelTimeS(), 0, ONE_DAY_S);
        range(at, "lm_time_s", step.lmTimeS(), 0, ONE_DAY_S);
        range(at, "vae_time_s", step.vaeTimeS(), 0, ONE_DAY_S);
        optionalRange(at, "interval_steps", step.intervalSteps(), 1, 1_000_000);
        range(at, "samples", step.samples(), 0, 1e9);
        // A non-finite loss or grad norm is a reading (the run diverged), never refused.
        if (step.loss() != null && Double.isFinite(step.loss()) && Math.abs(step.loss()) > 1e30) {
            throw ApiError.unprocessable(at + "loss must be between -1e30 and 1e30, NaN or Infinity, got "
                    + step.loss());
        }
        range(at, "lr", step.lr(), 0, 1e6);
        if (step.gradNorm() != null && Double.isFinite(step.gradNorm())) {
            range(at, "grad_norm", step.gradNorm(), 0, 1e30);
        }
        optionalRange(at, "bucket_height", step.bucketHeight(), 1, 100_000);
        optionalRange(at, "bucket_width", step.bucketWidth(), 1, 100_000);
        optionalRange(at, "rank", step.rank(), 0, 1_000_000);
        if (step.ts() != null) {
            timestamp(at, "ts", step.ts());
        }
        if (step.source() != null && !SOURCE.matcher(step.source()).matches()) {
            throw ApiError.unprocessable(at + "source must be 1 to " + MAX_SOURCE_LENGTH
                    + " characters of A-Z a-z 0-9 _ . : -, got '" + BodyDecoder.printable(step.source(), 40) + "'");
        }
    }

    /** Checks a run spec's shape; what the catalogs know is the estimator's to judge. */
    public void check(RunSpec spec) {
        text("model", "", spec.model(), 128);
        text("gpu", "", spec.gpu(), 128);
        optionalRange("gpus", "", spec.gpus(), 1, 1_000_000);
        optionalRange("batch", "", spec.batch(), 1, 1_000_000);
        optionalRange("resolution", "", spec.resolution(), 1, 65_536);
        optionalRange("height", "", spec.height(), 1, 65_536);
        optionalRange("width", "", spec.width(), 1, 65_536);
        optionalRange("frames", "", spec.frames(), 1, 100_000);
        text("precision", "", spec.precision(), 32);
        text("optimizer", "", spec.optimizer(), 32);
        text("features", "", spec.features(), 32);
        optionalRange("zero", "", spec.zero(), 0, 3);
        text("attention", "", spec.attention(), 32);
        optionalRange("grad_accumulation", "", spec.gradAccumulation(), 1, 1_000_000);
        optionalRange("total_steps", "", spec.totalSteps(), 1, MAX_STEP);
        if (spec.notes() != null) {
            size("", "notes", spec.notes(), 32);
            spec.notes().forEach(n -> text("notes[]", "", n, 500));
        }
    }

    // ---- the individual rules -------------------------------------------------------------------------------

    /** A field's name in a message ({@code gpus[3].utilization_ratio}), spelled out only when a rule is broken. */
    private record Path(Object parent, String name, int index, String after) {
        @Override
        public String toString() {
            return after == null ? parent + name : parent + name + index + after;
        }
    }

    private static Object path(Object parent, String name) {
        return new Path(parent, name, 0, null);
    }

    private static Object path(Object parent, String name, int index, String after) {
        return new Path(parent, name, index, after);
    }

    // A rule builds the field's path only to throw: a valid value costs no path object.

    private static void notNull(Object at, Object value) {
        if (value == null) {
            throw ApiError.unprocessable(at + " is null");
        }
    }

    private static void timestamp(Object parent, String name, double ts) {
        finite(parent, name, ts);
        if (ts < 0 || ts > MAX_TS) {
            throw ApiError.unprocessable(path(parent, name) + " must be unix seconds (0 to 1e10), got " + ts);
        }
    }

    private static void finite(Object parent, String name, double value) {
        if (!Double.isFinite(value)) {
            throw ApiError.unprocessable(path(parent, name) + " must be a finite number");
        }
    }

    private static void range(Object parent, String name, Double value, double min, double max) {
        if (value == null) {
            return;
        }
        finite(parent, name, value);
        if (value < min || value > max) {
            throw ApiError.unprocessable(path(parent, name) + " must be between " + plain(min) + " and " + plain(max)
                    + ", got " + value);
        }
    }

    private static void range(Object parent, String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw ApiError.unprocessable(path(parent, name) + " must be between " + min + " and " + max + ", got "
                    + value);
        }
    }

    private static void optionalRange(Object parent, String name, Number value, long min, long max) {
        if (value != null) {
            range(parent, name, value.longValue(), min, max);
        }
    }

    private static void ratio(Object parent, String name, Double value) {
        range(parent, name, value, 0, 1);
    }

    private static void bytes(Object parent, String name, Long value) {
        optionalRange(parent, name, value, 0, MAX_MEMORY_BYTES);
    }

    private static void hertz(Object parent, String name, Long value) {
        optionalRange(parent, name, value, 0, MAX_CLOCK_HZ);
    }

    /** A value that becomes a metric label: printable ASCII without quotes or backslashes, at most 128 chars. */
    private static void label(Object parent, String name, String value, boolean required) {
        if (value == null || value.isEmpty()) {
            if (required) {
                throw ApiError.unprocessable(path(parent, name) + " is missing");
            }
            return;
        }
        if (value.length() > MAX_LABEL_LENGTH) {
            throw ApiError.unprocessable(path(parent, name) + " is longer than " + MAX_LABEL_LENGTH + " characters");
        }
        for (int i = 0; i < value.length(); i++) {
            if (!labelChar(value.charAt(i))) {
                throw ApiError.unprocessable(path(parent, name)
                        + " must be printable ASCII without spaces, quotes or backslashes");
            }
        }
    }

    private static boolean labelChar(char c) {
        return c > 0x20 && c < 0x7f && c != '"' && c != '\\';
    }

    private static void text(Object parent, String name, String value, int max) {
        if (value != null && value.length() > max) {
            throw ApiError.unprocessable(path(parent, name) + " is longer than " + max + " characters");
        }
    }

    /** Checks a list's size, then each entry (named {@code name[i]}); a missing list is fine. */
    private static <T> void each(Object parent, String name, List<T> list, int max, BiConsumer<Object, T> check) {
        if (list == null) {
            return;
        }
        size(parent, name, list, max);
        String open = name + "[";
        for (int i = 0; i < list.size(); i++) {
            check.accept(path(parent, open, i, "]"), list.get(i));
        }
    }

    private static void size(Object parent, String name, List<?> list, int max) {
        if (list.size() > max) {
            throw ApiError.unprocessable(path(parent, name) + " has " + list.size() + " entries, more than " + max);
        }
    }

    private static String plain(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long) value) : Double.toString(value);
    }
}
