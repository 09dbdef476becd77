package dev.trainwatch.protocol;

/**
 * The agent's own health, carried by every batch.
 *
 * @param pollDurationSeconds duration of the last poll of all GPUs
 * @param failedReads         NVML reads that failed (not NOT_SUPPORTED) since the agent started
 * @param spoolDepth          batches waiting in the spool
 * @param spoolBytes          bytes on disk in the spool
 * @param droppedBatches      batches dropped because the spool was full, since start
 * @param intervalSeconds     polling interval
 */
public record AgentHealth(Double pollDurationSeconds, Long failedReads, Long spoolDepth, Long spoolBytes,
                          Long droppedBatches, Double intervalSeconds) {
}
