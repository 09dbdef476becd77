package dev.trainwatch.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Writes the agent's records as compact UTF-8 JSON, byte for byte what {@link Json#MAPPER}'s
 * {@code writeValueAsBytes} gives for them (snake_case names in the records' order, {@code null} fields and
 * {@code null} map values left out), without loading jackson-databind: the records are walked here and written
 * through jackson-core's {@link JsonGenerator}, the same writer the mapper uses, so escaping and numbers (non-finite
 * doubles as the strings {@code "NaN"}, {@code "Infinity"}) are the mapper's by construction. The agent writes every
 * batch with it: a JVM that loads jackson-databind to write a few KB a second carries its ~380 classes, a reflective
 * accessor class per record component and its serializer caches for its whole life (docs/PERFORMANCE.md, "Agent:
 * side by side").
 *
 * <p>A change to a record must be made here too: {@code WireWriterTest} compares this writer with the mapper on the
 * golden examples with every field set.
 *
 * <p>Not thread-safe; reuse one per thread ({@link #reset()} between values).
 */
public final class WireWriter {

    /** A plain factory: the mapper's generator settings are jackson-core's defaults. Thread-safe. */
    private static final JsonFactory FACTORY = JsonFactory.builder().build();

    /** The bytes written, read in place by {@link #array()} and {@link #size()}. */
    private static final class Buffer extends ByteArrayOutputStream {
        Buffer(int capacity) {
            super(capacity);
        }

        byte[] bytes() {
            return buf;
        }
    }

    private final Buffer out;
    private JsonGenerator gen;

    public WireWriter() {
        this(8192);
    }

    public WireWriter(int capacity) {
        out = new Buffer(Math.max(16, capacity));
    }

    /** Forgets what was written; keeps the buffer. */
    public void reset() {
        out.reset();
    }

    /** The buffer written so far (valid up to {@link #size()}); read in place, do not keep. */
    public byte[] array() {
        return out.bytes();
    }

    public int size() {
        return out.size();
    }

    /** A copy of what was written. */
    public byte[] toByteArray() {
        return out.toByteArray();
    }

    /** Writes one value: a protocol record, a list of them, or a plain value (string, number, boolean, map, list). */
    public WireWriter value(Object v) {
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            gen = g;
            write(v);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            gen = null;
        }
        return this;
    }

    private void write(Object v) throws IOException {
        if (v == null) {
            writeNull();
        } else if (v instanceof AgentBatch b) {
            batch(b);
        } else if (v instanceof StepEvent s) {
            step(s);
        } else if (v instanceof RunSpec s) {
            spec(s);
        } else if (v instanceof GpuSample g) {
            gpu(g);
        } else if (v instanceof RunAttribution r) {
            run(r);
        } else if (v instanceof AgentEvent e) {
            event(e);
        } else if (v instanceof String s) {
            string(s);
        } else if (v instanceof Double d) {
            number(d.doubleValue());
        } else if (v instanceof Float f) {
            gen.writeNumber(f.floatValue());
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            gen.writeNumber(((Number) v).longValue());
        } else if (v instanceof BigInteger i) {
            gen.writeNumber(i);
        } else if (v instanceof BigDecimal d) {
            gen.writeNumber(d);
        } else if (v instanceof Boolean b) {
            gen.writeBoolean(b);
        } else if (v instanceof Map<?, ?> m) {
            begin('{');
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (e.getValue() != null) {
                    name(String.valueOf(e.getKey()));
                    write(e.getValue());
                }
            }
            end('}');
        } else if (v instanceof Collection<?> c) {
            begin('[');
            for (Object o : c) {
                write(o);
            }
            end(']');
        } else if (v instanceof UtilizationWindow || v instanceof GpuProcess || v instanceof GpuActivity
                || v instanceof RankInfo || v instanceof AgentHealth || v instanceof HostMemory
                || v instanceof RunFailure || v instanceof RunEnding || v instanceof RunSpec.Bucket) {
            nested(v);
        } else {
            throw new IllegalArgumentException("the wire writer does not write " + v.getClass().getName());
        }
    }

    private void nested(Object v) throws IOException {
        if (v instanceof UtilizationWindow w) {
            window(w);
        } else if (v instanceof GpuProcess p) {
            process(p);
        } else if (v instanceof GpuActivity a) {
            activity(a);
        } else if (v instanceof RankInfo r) {
            rank(r);
        } else if (v instanceof AgentHealth h) {
            health(h);
        } else if (v instanceof HostMemory m) {
            hostMemory(m);
        } else if (v instanceof RunFailure f) {
            failure(f);
        } else if (v instanceof RunEnding e) {
            ending(e);
        } else {
            bucket((RunSpec.Bucket) v);
        }
    }

    // ---------------------------------------------------------------------------------------------------- records

    private void batch(AgentBatch b) throws IOException {
        begin('{');
        field("host", b.host());
        field("agent_id", b.agentId());
        name("seq");
        number(b.seq());
        if (b.gpus() != null) {
            name("gpus");
            begin('[');
            for (GpuSample g : b.gpus()) {
                if (g == null) {
                    writeNull();
                } else {
                    gpu(g);
                }
            }
            end(']');
        }
        if (b.runs() != null) {
            name("runs");
            begin('[');
            for (RunAttribution r : b.runs()) {
                if (r == null) {
                    writeNull();
                } else {
                    run(r);
                }
            }
            end(']');
        }
        if (b.events() != null) {
            name("events");
            begin('[');
            for (AgentEvent e : b.events()) {
                if (e == null) {
                    writeNull();
                } else {
                    event(e);
                }
            }
            end(']');
        }
        if (b.health() != null) {
            name("health");
            health(b.health());
        }
        if (b.hostMemory() != null) {
            name("host_memory");
            hostMemory(b.hostMemory());
        }
        field("sent_at", b.sentAt());
        if (b.runSteps() != null) {
            name("run_steps");
            begin('[');
            for (RunSteps r : b.runSteps()) {
                if (r == null) {
                    writeNull();
                    continue;
                }
                begin('{');
                field("run_id", r.runId());
                if (r.steps() != null) {
                    name("steps");
                    begin('[');
                    for (StepEvent e : r.steps()) {
                        if (e == null) {
                            writeNull();
                        } else {
                            step(e);
                        }
                    }
                    end(']');
                }
                end('}');
            }
            end(']');
        }
        end('}');
    }

    private void gpu(GpuSample g) throws IOException {
        begin('{');
        name("ts");
        number(g.ts());
        name("index");
        number(g.index());
        field("uuid", g.uuid());
        field("name", g.name());
        field("pci_bus_id", g.pciBusId());
        field("memory_total_bytes", g.memoryTotalBytes());
        field("memory_used_bytes", g.memoryUsedBytes());
        field("memory_reserved_bytes", g.memoryReservedBytes());
        field("memory_free_bytes", g.memoryFreeBytes());
        field("utilization_ratio", g.utilizationRatio());
        field("memory_utilization_ratio", g.memoryUtilizationRatio());
        if (g.utilizationWindow() != null) {
            name("utilization_window");
            window(g.utilizationWindow());
        }
        field("sm_clock_hz", g.smClockHz());
        field("sm_clock_max_hz", g.smClockMaxHz());
        field("mem_clock_hz", g.memClockHz());
        field("mem_clock_max_hz", g.memClockMaxHz());
        field("clock_event_reasons", g.clockEventReasons());
        field("power_watts", g.powerWatts());
        field("power_limit_watts", g.powerLimitWatts());
        field("energy_joules", g.energyJoules());
        field("temperature_celsius", g.temperatureCelsius());
        field("pstate", g.pstate());
        if (g.processes() != null) {
            name("processes");
            begin('[');
            for (GpuProcess p : g.processes()) {
                if (p == null) {
                    writeNull();
                } else {
                    process(p);
                }
            }
            end(']');
        }
        field("lost", g.lost());
        if (g.activity() != null) {
            name("activity");
            activity(g.activity());
        }
        end('}');
    }

    private void window(UtilizationWindow w) throws IOException {
        begin('{');
        name("count");
        number(w.count());
        name("min_ratio");
        number(w.minRatio());
        name("mean_ratio");
        number(w.meanRatio());
        name("max_ratio");
        number(w.maxRatio());
        name("idle_fraction");
        number(w.idleFraction());
        name("from_ts");
        number(w.fromTs());
        name("to_ts");
        number(w.toTs());
        end('}');
    }

    private void process(GpuProcess p) throws IOException {
        begin('{');
        name("pid");
        number(p.pid());
        field("used_memory_bytes", p.usedMemoryBytes());
        field("sm_utilization_ratio", p.smUtilizationRatio());
        field("memory_utilization_ratio", p.memoryUtilizationRatio());
        end('}');
    }

    private void activity(GpuActivity a) throws IOException {
        begin('{');
        field("window_seconds", a.windowSeconds());
        field("sm_active_ratio", a.smActiveRatio());
        field("sm_occupancy_ratio", a.smOccupancyRatio());
        field("tensor_active_ratio", a.tensorActiveRatio());
        field("tensor_hmma_active_ratio", a.tensorHmmaActiveRatio());
        field("dram_active_ratio", a.dramActiveRatio());
        field("pcie_rx_bytes_per_second", a.pcieRxBytesPerSecond());
        field("pcie_tx_bytes_per_second", a.pcieTxBytesPerSecond());
        field("nvlink_rx_bytes_per_second", a.nvlinkRxBytesPerSecond());
        field("nvlink_tx_bytes_per_second", a.nvlinkTxBytesPerSecond());
        field("nvlink_rx_bytes", a.nvlinkRxBytes());
        field("nvlink_tx_bytes", a.nvlinkTxBytes());
        end('}');
    }

    private void run(RunAttribution r) throws IOException {
        begin('{');
        field("run_id", r.runId());
        field("pids", r.pids());
        field("gpu_uuids", r.gpuUuids());
        if (r.ranks() != null) {
            name("ranks");
            begin('[');
            for (RankInfo k : r.ranks()) {
                if (k == null) {
                    writeNull();
                } else {
                    rank(k);
                }
            }
            end(']');
        }
        field("master_addr", r.masterAddr());
        field("ended", r.ended());
        field("aliases", r.aliases());
        field("namespace", r.namespace());
        field("pod", r.pod());
        field("container", r.container());
        field("job", r.job());
        end('}');
    }

    private void rank(RankInfo k) throws IOException {
        begin('{');
        name("pid");
        number(k.pid());
        field("rank", k.rank());
        field("local_rank", k.localRank());
        field("world_size", k.worldSize());
        field("gpu_uuids", k.gpuUuids());
        field("state", k.state());
        field("cpu_seconds", k.cpuSeconds());
        field("rss_bytes", k.rssBytes());
        field("workers", k.workers());
        field("workers_rss_bytes", k.workersRssBytes());
        field("workers_cpu_seconds", k.workersCpuSeconds());
        end('}');
    }

    private void event(AgentEvent e) throws IOException {
        begin('{');
        name("ts");
        number(e.ts());
        field("kind", e.kind());
        field("gpu_uuid", e.gpuUuid());
        field("xid", e.xid());
        field("run_id", e.runId());
        field("message", e.message());
        if (e.failure() != null) {
            name("failure");
            failure(e.failure());
        }
        if (e.ending() != null) {
            name("ending");
            ending(e.ending());
        }
        end('}');
    }

    private void failure(RunFailure f) throws IOException {
        begin('{');
        field("cause", f.cause());
        field("summary", f.summary());
        field("exit_code", f.exitCode());
        field("signal", f.signal());
        field("rank", f.rank());
        field("detail", f.detail());
        field("lines", f.lines());
        end('}');
    }

    private void ending(RunEnding e) throws IOException {
        begin('{');
        field("log", e.log());
        name("cause_in_log");
        gen.writeBoolean(e.causeInLog());
        field("last_line", e.lastLine());
        field("outputs", e.outputs());
        end('}');
    }

    private void health(AgentHealth h) throws IOException {
        begin('{');
        field("poll_duration_seconds", h.pollDurationSeconds());
        field("failed_reads", h.failedReads());
        field("spool_depth", h.spoolDepth());
        field("spool_bytes", h.spoolBytes());
        field("dropped_batches", h.droppedBatches());
        field("interval_seconds", h.intervalSeconds());
        field("delivery_alive", h.deliveryAlive());
        field("spool_in_memory", h.spoolInMemory());
        field("rejected_spool_entries", h.rejectedSpoolEntries());
        field("delivery_errors", h.deliveryErrors());
        field("log_readable", h.logReadable());
        field("last_error", h.lastError());
        end('}');
    }

    private void hostMemory(HostMemory m) throws IOException {
        begin('{');
        name("ts");
        number(m.ts());
        field("mem_total_bytes", m.memTotalBytes());
        field("mem_available_bytes", m.memAvailableBytes());
        field("swap_used_bytes", m.swapUsedBytes());
        field("shm_total_bytes", m.shmTotalBytes());
        field("shm_used_bytes", m.shmUsedBytes());
        end('}');
    }

    private void step(StepEvent s) throws IOException {
        begin('{');
        field("step", s.step());
        field("time_s", s.timeS());
        field("data_time_s", s.dataTimeS());
        field("model_time_s", s.modelTimeS());
        field("lm_time_s", s.lmTimeS());
        field("vae_time_s", s.vaeTimeS());
        field("interval_steps", s.intervalSteps());
        field("samples", s.samples());
        field("loss", s.loss());
        field("lr", s.lr());
        field("grad_norm", s.gradNorm());
        field("bucket_height", s.bucketHeight());
        field("bucket_width", s.bucketWidth());
        field("rank", s.rank());
        field("ts", s.ts());
        field("source", s.source());
        end('}');
    }

    private void spec(RunSpec s) throws IOException {
        begin('{');
        field("model", s.model());
        field("gpu", s.gpu());
        field("gpus", s.gpus());
        field("batch", s.batch());
        field("resolution", s.resolution());
        field("height", s.height());
        field("width", s.width());
        field("frames", s.frames());
        field("precision", s.precision());
        field("optimizer", s.optimizer());
        field("grad_checkpointing", s.gradCheckpointing());
        field("ema", s.ema());
        field("features", s.features());
        field("zero", s.zero());
        field("attention", s.attention());
        field("grad_accumulation", s.gradAccumulation());
        field("total_steps", s.totalSteps());
        field("text_features", s.textFeatures());
        field("vae_features", s.vaeFeatures());
        field("weights", s.weights());
        field("checkpoint_blocks", s.checkpointBlocks());
        field("vae_micro_batch", s.vaeMicroBatch());
        field("buckets", s.buckets());
        field("kernels", s.kernels());
        field("attention_precision", s.attentionPrecision());
        field("lora_rank", s.loraRank());
        field("lora_targets", s.loraTargets());
        field("images", s.images());
        field("epochs", s.epochs());
        field("base_weights", s.baseWeights());
        field("blocks_to_swap", s.blocksToSwap());
        end('}');
    }

    private void bucket(RunSpec.Bucket b) throws IOException {
        begin('{');
        field("height", b.height());
        field("width", b.width());
        field("frames", b.frames());
        field("batch", b.batch());
        field("weight", b.weight());
        end('}');
    }

    // ---------------------------------------------------------------------------------------------------- syntax
    // jackson-core's generator writes the syntax, escaping and numbers exactly as the mapper does (it is the mapper's
    // own writer); this class only walks the records.

    /** A member whose value is left out when null. */
    private void field(String name, Object v) throws IOException {
        if (v != null) {
            name(name);
            write(v);
        }
    }

    private void begin(char c) throws IOException {
        if (c == '{') {
            gen.writeStartObject();
        } else {
            gen.writeStartArray();
        }
    }

    private void end(char c) throws IOException {
        if (c == '}') {
            gen.writeEndObject();
        } else {
            gen.writeEndArray();
        }
    }

    private void name(String name) throws IOException {
        gen.writeFieldName(name);
    }

    private void number(long v) throws IOException {
        gen.writeNumber(v);
    }

    private void number(double v) throws IOException {
        gen.writeNumber(v);
    }

    private void string(String s) throws IOException {
        gen.writeString(s);
    }

    private void writeNull() throws IOException {
        gen.writeNull();
    }

    /** For tests and callers that want a plain array: the value as compact JSON. */
    public static byte[] toBytes(Object value) {
        return new WireWriter(1024).value(value).toByteArray();
    }
}
