package dev.trainwatch.agent.testing;

import dev.trainwatch.agent.log.StepSource;
import dev.trainwatch.protocol.StepEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/** A log the test writes step reports to: each {@link #poll()} takes what was added since the last. Thread-safe. */
public final class QueueLog implements StepSource {

    private final ConcurrentLinkedQueue<StepEvent> lines = new ConcurrentLinkedQueue<>();

    /** A report the next poll returns. */
    public void add(StepEvent step) {
        lines.add(step);
    }

    @Override
    public List<StepEvent> poll() {
        List<StepEvent> out = new ArrayList<>();
        StepEvent e;
        while ((e = lines.poll()) != null) {
            out.add(e);
        }
        return out;
    }

    @Override
    public String problem() {
        return null;
    }

    @Override
    public void close() {
    }
}
