package dev.trainwatch.collector.state;

/**
 * Outcome of {@link Fleet#ingestBatch}.
 *
 * @param duplicate true when a batch with this (agent_id, seq) or a later one was already applied: a replay, ignored
 * @param gpus      the distinct GPUs (by uuid) the batch holds readings of: an agent with {@code --ship-every} sends
 *                  several readings of each GPU in one batch
 */
public record IngestResult(boolean duplicate, int gpus) {
}
