package dev.trainwatch.collector.state;

/** Outcome of {@link Fleet#ingestBatch}. */
public enum IngestResult {
    /** The batch was applied. */
    ACCEPTED,
    /** A batch with this (agent_id, seq) or a later one was already applied: a replay, ignored. */
    DUPLICATE
}
