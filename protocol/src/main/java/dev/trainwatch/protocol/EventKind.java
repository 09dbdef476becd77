package dev.trainwatch.protocol;

import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The kinds of {@link AgentEvent} this version knows. On the wire a kind is its {@link #wireName()}; a kind a
 * newer agent sends that this version does not know is {@link #OTHER} (kept, counted, never an error).
 */
public enum EventKind {
    /** An XID error of a GPU ({@code xid} and {@code gpu_uuid} set). */
    XID,
    /** A double-bit ECC error of a GPU. */
    ECC_DOUBLE_BIT,
    /** A GPU fell off the bus or stopped answering. */
    GPU_LOST,
    /** A run's processes on this host are gone. */
    RUN_ENDED,
    /** A run's processes exited with an error ({@code failure} set). */
    RUN_FAILED,
    /** A phase the run's log announced ({@code message} names it, {@code progress} when it shows a bar). */
    PHASE,
    /** The trainer caught a CUDA OOM and skipped the batch ({@code count}: how many so far). */
    OOM_SKIPPED,
    /** The agent could not read something (its log, a GPU). */
    READ_ERROR,
    OTHER;

    private static final Map<String, EventKind> BY_WIRE_NAME = Stream.of(values()).filter(k -> k != OTHER)
            .collect(Collectors.toUnmodifiableMap(EventKind::wireName, Function.identity()));

    /** The name on the wire: {@code xid}, {@code gpu_lost}, {@code run_ended}, … */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind a wire name stands for; {@link #OTHER} for one this version does not know, or null. */
    public static EventKind of(String wireName) {
        return wireName == null ? OTHER : BY_WIRE_NAME.getOrDefault(wireName, OTHER);
    }
}
