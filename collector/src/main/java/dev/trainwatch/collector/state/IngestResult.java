package dev.trainwatch.collector.state;

import dev.trainwatch.protocol.StepEvent;
import java.util.List;
import java.util.Map;

/**
 * Outcome of {@link Fleet#ingestBatch}: whether it was a replay (ignored), the distinct GPUs it holds readings of,
 * the steps counted per run, and why its steps were refused (null when they were not).
 */
public record IngestResult(boolean duplicate, int gpus, Map<String, List<StepEvent>> stepsCounted,
                           String stepsRefused) {

    /** A batch's outcome before its steps. */
    public IngestResult(boolean duplicate, int gpus) {
        this(duplicate, gpus, Map.of(), null);
    }
}
