package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Path;
import java.util.List;

/**
 * Steps a run reported since the previous call, from its log (or any other source). Called from one thread.
 */
public interface StepSource extends AutoCloseable {

    /** Steps seen since the previous call, oldest first; never null. Does not throw for an unreadable file. */
    List<StepEvent> poll();

    /** The file the steps are read from, when they come from one (its tail explains a crash); else null. */
    default Path file() {
        return null;
    }

    /** Phase and {@code oom_skipped} events the source announced since the previous call, oldest first, no run id. */
    default List<AgentEvent> drainEvents() {
        return List.of();
    }

    /**
     * Resumes from what was committed in {@code dir} and commits there from now on; call once, before the first
     * {@link #poll()}. Sources that cannot resume ignore it.
     */
    default void keepPositionsIn(Path dir) {
    }

    /**
     * An opaque snapshot of where the source stands after the steps returned so far, for {@link #commit} once
     * they are delivered or spooled; null when the source keeps nothing.
     */
    default Object checkpoint() {
        return null;
    }

    /** Makes a snapshot from {@link #checkpoint()} durable: a restart resumes after the steps it covers. */
    default void commit(Object checkpoint) {
    }

    /** A one-line description of the source's current problem (missing file, unreadable), or null when fine. */
    String problem();

    @Override
    void close();
}
