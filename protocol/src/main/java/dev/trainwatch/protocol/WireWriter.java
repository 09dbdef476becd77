package dev.trainwatch.protocol;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Writes the agent's records as compact UTF-8 JSON, byte for byte what {@link Json#MAPPER}'s
 * {@code writeValueAsBytes} gives for them (snake_case names in the records' order, {@code null} fields and
 * {@code null} map values left out, non-finite doubles as the strings {@code "NaN"}, {@code "Infinity"},
 * {@code "-Infinity"}, doubles as {@link Double#toString(double)}, strings escaped as Jackson escapes them), without
 * loading Jackson. The agent writes every batch with it: a JVM that loads jackson-databind to write a few KB a second
 * carries its ~380 classes, a reflective accessor class per record component and its serializer caches for its
 * whole life (docs/PERFORMANCE.md, "Agent: side by side").
 *
 * <p>A change to a record must be made here too: {@code WireWriterTest} compares this writer with the mapper on the
 * golden examples with every field set.
 *
 * <p>Not thread-safe; reuse one per thread ({@link #reset()} between values).
 */
public final class WireWriter {

    private static final byte[] HEX = "0123456789ABCDEF".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};

    private byte[] buf;
    private int size;
    /** Whether the object or array being written has had a member yet (one bit per nesting level). */
    private long firstBits;
    private int depth;

    public WireWriter() {
        this(8192);
    }

    public WireWriter(int capacity) {
        buf = new byte[Math.max(16, capacity)];
    }

    /** Forgets what was written; keeps the buffer. */
    public void reset() {
        size = 0;
        depth = 0;
        firstBits = 0;
    }

    /** The buffer written so far (valid up to {@link #size()}); read in place, do not keep. */
    public byte[] array() {
        return buf;
    }

    public int size() {
        return size;
    }

    /** A copy of what was written. */
    public byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }

    /** Writes one value: a protocol record, a list of them, or a plain value (string, number, boolean, map, list). */
    public WireWriter value(Object v) {
        if (v == null) {
            raw(NULL);
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
            float x = f;
            if (Float.isNaN(x) || Float.isInfinite(x)) {
                string(Float.toString(x));
            } else {
                ascii(Float.toString(x));
            }
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                || v instanceof BigInteger) {
            ascii(v.toString());
        } else if (v instanceof BigDecimal d) {
            ascii(d.toString());
        } else if (v instanceof Boolean b) {
            raw(b ? TRUE : FALSE);
        } else if (v instanceof Map<?, ?> m) {
            begin('{');
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (e.getValue() != null) {
                    name(String.valueOf(e.getKey()));
                    value(e.getValue());
                }
            }
            end('}');
        } else if (v instanceof Collection<?> c) {
            begin('[');
            for (Object o : c) {
                element();
                value(o);
            }
            end(']');
        } else if (v instanceof UtilizationWindow || v instanceof GpuProcess || v instanceof GpuActivity
                || v instanceof RankInfo || v instanceof AgentHealth || v instanceof HostMemory
                || v instanceof RunFailure || v instanceof RunEnding || v instanceof RunSpec.Bucket) {
            nested(v);
        } else {
            throw new IllegalArgumentException("the wire writer does not write " + v.getClass().getName());
        }
        return this;
    }

    private void nested(Object v) {
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

    private void batch(AgentBatch b) {
        begin('{');
        field("host", b.host());
        field("agent_id", b.agentId());
        name("seq");
        number(b.seq());
        if (b.gpus() != null) {
            name("gpus");
            begin('[');
            for (GpuSample g : b.gpus()) {
                element();
                if (g == null) {
                    raw(NULL);
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
                element();
                if (r == null) {
                    raw(NULL);
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
                element();
                if (e == null) {
                    raw(NULL);
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
        end('}');
    }

    private void gpu(GpuSample g) {
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
                element();
                if (p == null) {
                    raw(NULL);
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

    private void window(UtilizationWindow w) {
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

    private void process(GpuProcess p) {
        begin('{');
        name("pid");
        number(p.pid());
        field("used_memory_bytes", p.usedMemoryBytes());
        field("sm_utilization_ratio", p.smUtilizationRatio());
        field("memory_utilization_ratio", p.memoryUtilizationRatio());
        end('}');
    }

    private void activity(GpuActivity a) {
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

    private void run(RunAttribution r) {
        begin('{');
        field("run_id", r.runId());
        field("pids", r.pids());
        field("gpu_uuids", r.gpuUuids());
        if (r.ranks() != null) {
            name("ranks");
            begin('[');
            for (RankInfo k : r.ranks()) {
                element();
                if (k == null) {
                    raw(NULL);
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

    private void rank(RankInfo k) {
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

    private void event(AgentEvent e) {
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

    private void failure(RunFailure f) {
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

    private void ending(RunEnding e) {
        begin('{');
        field("log", e.log());
        name("cause_in_log");
        raw(e.causeInLog() ? TRUE : FALSE);
        field("last_line", e.lastLine());
        field("outputs", e.outputs());
        end('}');
    }

    private void health(AgentHealth h) {
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

    private void hostMemory(HostMemory m) {
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

    private void step(StepEvent s) {
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

    private void spec(RunSpec s) {
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
        end('}');
    }

    private void bucket(RunSpec.Bucket b) {
        begin('{');
        field("height", b.height());
        field("width", b.width());
        field("frames", b.frames());
        field("batch", b.batch());
        field("weight", b.weight());
        end('}');
    }

    // ---------------------------------------------------------------------------------------------------- syntax

    /** A member whose value is left out when null. */
    private void field(String name, Object v) {
        if (v != null) {
            name(name);
            value(v);
        }
    }

    private void begin(char c) {
        if (depth == 63) {
            throw new IllegalArgumentException("nested deeper than 63 levels");
        }
        put((byte) c);
        depth++;
        firstBits |= 1L << depth;
    }

    private void end(char c) {
        firstBits &= ~(1L << depth);
        depth--;
        put((byte) c);
    }

    /** Before an array element: a comma unless it is the first. */
    private void element() {
        long bit = 1L << depth;
        if ((firstBits & bit) != 0) {
            firstBits &= ~bit;
        } else {
            put((byte) ',');
        }
    }

    private void name(String name) {
        element();
        string(name);
        put((byte) ':');
    }

    private void number(long v) {
        ascii(Long.toString(v));
    }

    private void number(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            string(Double.toString(v));
        } else {
            ascii(Double.toString(v));
        }
    }

    private void raw(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, size, b.length);
        size += b.length;
    }

    private void ascii(String s) {
        int n = s.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            buf[size++] = (byte) s.charAt(i);
        }
    }

    /** A JSON string as Jackson's UTF-8 generator writes it. */
    private void string(String s) {
        int n = s.length();
        ensure(n * 6 + 2);
        byte[] b = buf;
        int p = size;
        b[p++] = '"';
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                if (c >= 0x20 && c != '"' && c != '\\') {
                    b[p++] = (byte) c;
                } else {
                    b[p++] = '\\';
                    switch (c) {
                        case '"' -> b[p++] = '"';
                        case '\\' -> b[p++] = '\\';
                        case '\b' -> b[p++] = 'b';
                        case '\t' -> b[p++] = 't';
                        case '\n' -> b[p++] = 'n';
                        case '\f' -> b[p++] = 'f';
                        case '\r' -> b[p++] = 'r';
                        default -> p = unicodeEscape(b, p, c);
                    }
                }
            } else if (c < 0x800) {
                b[p++] = (byte) (0xc0 | (c >> 6));
                b[p++] = (byte) (0x80 | (c & 0x3f));
            } else if (c >= 0xd800 && c <= 0xdfff) {
                // Jackson escapes each half of a surrogate pair rather than combining them.
                b[p++] = '\\';
                p = unicodeEscape(b, p, c);
            } else {
                b[p++] = (byte) (0xe0 | (c >> 12));
                b[p++] = (byte) (0x80 | ((c >> 6) & 0x3f));
                b[p++] = (byte) (0x80 | (c & 0x3f));
            }
        }
        b[p++] = '"';
        size = p;
    }

    /** {@code uXXXX} after a backslash already written. */
    private static int unicodeEscape(byte[] b, int p, char c) {
        b[p++] = 'u';
        b[p++] = HEX[(c >> 12) & 0xf];
        b[p++] = HEX[(c >> 8) & 0xf];
        b[p++] = HEX[(c >> 4) & 0xf];
        b[p++] = HEX[c & 0xf];
        return p;
    }

    private void put(byte c) {
        ensure(1);
        buf[size++] = c;
    }

    private void ensure(int more) {
        if (size + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(size + more, buf.length * 2));
        }
    }

    /** For tests and callers that want a plain array: the value as compact JSON. */
    public static byte[] toBytes(Object value) {
        return new WireWriter(1024).value(value).toByteArray();
    }
}
