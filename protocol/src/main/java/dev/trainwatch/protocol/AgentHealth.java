package dev.trainwatch.protocol;

/**
 * The agent's own health, carried by every batch.
 *
 * @param pollDurationSeconds duration of the last poll of all GPUs
 * @param failedReads         NVML reads that failed (not NOT_SUPPORTED) since the agent started
 * @param droppedBatches      batches dropped because the spool was full, since start
 * @param deliveryAlive       whether the agent's delivery thread is running (false means nothing will reach the
 *                            collector from the spool: a defect the collector should show)
 * @param spoolInMemory       whether the spool directory cannot be written and shipments wait in memory only
 * @param rejectedSpoolEntries spool entries moved aside (unreadable, corrupt or too big) since start
 * @param deliveryErrors      unexpected errors the delivery thread caught and survived since start
 * @param logReadable         whether the followed log could be read at the last attempt; null without a log
 * @param lastError           the agent's most recent problem, one line, or null when none is current
 */
public record AgentHealth(Double pollDurationSeconds, Long failedReads, Long spoolDepth, Long spoolBytes,
                          Long droppedBatches, Double intervalSeconds, Boolean deliveryAlive, Boolean spoolInMemory,
                          Long rejectedSpoolEntries, Long deliveryErrors, Boolean logReadable, String lastError) {

    /** Health without the delivery and log details (older agents, tests). */
    public AgentHealth(Double pollDurationSeconds, Long failedReads, Long spoolDepth, Long spoolBytes,
                       Long droppedBatches, Double intervalSeconds) {
        this(pollDurationSeconds, failedReads, spoolDepth, spoolBytes, droppedBatches, intervalSeconds, null, null,
                null, null, null, null);
    }
}
