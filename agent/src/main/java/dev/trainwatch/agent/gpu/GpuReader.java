package dev.trainwatch.agent.gpu;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import java.util.List;

/**
 * Reads every GPU of the node: the seam between the agent's loop and NVML (tests use hand-written fakes). One
 * polling thread; an event thread may fill what {@link #drainEvents()} drains.
 */
public interface GpuReader extends AutoCloseable {

    /** One sample per GPU; a failed reading is absent and counted, a lost GPU has {@code lost = true}. */
    List<GpuSample> readAll();

    /** Events (XID errors, GPUs lost) since the previous call, oldest first. */
    default List<AgentEvent> drainEvents() {
        return List.of();
    }

    /** Reads that failed since start (NOT_SUPPORTED is not a failure). */
    default long failedReads() {
        return 0;
    }

    /** The driver version, or "unknown". */
    String driverVersion();

    /** Idempotent. */
    @Override
    default void close() {
    }
}
