package dev.trainwatch.collector.state;

import dev.trainwatch.protocol.StepEvent;
import java.util.List;
import java.util.Map;

/**
 * Outcome of {@link Fleet#ingestBatch}.
 *
 * @param duplicate    true when a batch with this (agent_id, seq) or a later one was already applied: a replay,
 *                     ignored (its steps too: they were applied with it)
 * @param gpus         the distinct GPUs (by uuid) the batch holds readings of: an agent with {@code --ship-every}
 *                     sends several readings of each GPU in one batch
 * @param stepsCounted of the steps the batch carried ({@code run_steps}), those counted as each run's steps (what
 *                     feeds its step-time summary), by run; empty when it carried none
 * @param stepsRefused why the batch's steps were not applied when they were not (no room for a new run), else null;
 *                     its readings were applied all the same
 */
public record IngestResult(boolean duplicate, int gpus, Map<String, List<StepEvent>> stepsCounted,
                           String stepsRefused) {

    /** A batch's outcome before its steps. */
    public IngestResult(boolean duplicate, int gpus) {
        this(duplicate, gpus, Map.of(), null);
    }
}
