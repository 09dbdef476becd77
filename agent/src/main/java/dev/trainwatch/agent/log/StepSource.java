package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Path;
import java.util.List;

/** Steps a run reported since the previous call, from its log or any other source. Called from one thread. */
public interface StepSource extends AutoCloseable {

    List<StepEvent> poll();

    default Path file() {
        return null;
    }

    default List<AgentEvent> drainEvents() {
        return List.of();
    }

    /** Call once, before the first {@link #poll()}; sources that cannot resume ignore it. */
    default void keepPositionsIn(Path dir) {
    }

    /** An opaque snapshot for {@link #commit} once the steps so far are delivered; null when nothing is kept. */
    default Object checkpoint() {
        return null;
    }

    default void commit(Object checkpoint) {
    }

    String problem();

    @Override
    void close();
}
