package dev.trainwatch.collector.state;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one detector's evaluations cost since the collector started: how many and their time on the monotonic clock,
 * as node_exporter times each of its collectors. Written under the fleet's lock, read by metrics without it.
 */
public final class DetectorCost {
    private final LongAdder evaluations = new LongAdder();
    private final LongAdder nanos = new LongAdder();

    /** One evaluation that took {@code elapsedNanos}. */
    void add(long elapsedNanos) {
        evaluations.increment();
        nanos.add(Math.max(0, elapsedNanos));
    }

    Total total() {
        return new Total(evaluations.sum(), nanos.sum() / 1e9);
    }

    /** Evaluations since start and the seconds they took in all. */
    public record Total(long evaluations, double seconds) {
    }
}
