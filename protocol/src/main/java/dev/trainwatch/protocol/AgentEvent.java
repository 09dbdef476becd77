package dev.trainwatch.protocol;

/**
 * Something that happened on the node, not a periodic reading.
 *
 * @param ts      unix seconds
 * @param kind    {@code xid}, {@code gpu_lost}, {@code run_ended}, {@code read_error}, {@code phase}, {@code run_failed}, …
 * @param gpuUuid the GPU concerned, if any
 * @param xid     the XID number for {@code xid} events
 * @param runId   the run concerned, if any
 * @param message human-readable detail ({@code phase}: {@code checkpoint}, {@code evaluation} or {@code sampling})
 * @param failure for {@code run_failed}: why the run's processes exited with an error
 * @param ending  for {@code run_ended}: what the agent's log and the processes' outputs say about the end, or null
 */
public record AgentEvent(double ts, String kind, String gpuUuid, Long xid, String runId, String message,
                         RunFailure failure, RunEnding ending) {

    /** An event without an ending. */
    public AgentEvent(double ts, String kind, String gpuUuid, Long xid, String runId, String message,
                      RunFailure failure) {
        this(ts, kind, gpuUuid, xid, runId, message, failure, null);
    }

    /** An event without a failure. */
    public AgentEvent(double ts, String kind, String gpuUuid, Long xid, String runId, String message) {
        this(ts, kind, gpuUuid, xid, runId, message, null, null);
    }

    /** An XID error event. */
    public static AgentEvent xid(double ts, String gpuUuid, long xid) {
        return new AgentEvent(ts, "xid", gpuUuid, xid, null, "XID " + xid);
    }
}
