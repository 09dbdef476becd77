package dev.trainwatch.protocol;

/**
 * Something that happened on the node, not a periodic reading.
 *
 * @param ts      unix seconds
 * @param kind    an {@link EventKind}'s wire name: {@code xid}, {@code gpu_lost}, {@code run_ended}, {@code read_error},
 *                {@code phase}, {@code run_failed}, …
 * @param xid     the XID number for {@code xid} events
 * @param message human-readable detail ({@code phase}: {@code checkpoint}, {@code evaluation}, {@code caching},
 *                {@code quantizing}, …; {@code oom_skipped}: the trainer's line)
 * @param failure for {@code run_failed}: why the run's processes exited with an error
 * @param ending  for {@code run_ended}: what the agent's log and the processes' outputs say about the end, or null
 * @param progress for {@code phase}: how far the phase's progress bar has got, or null when the line shows none
 * @param count   for {@code oom_skipped}: the CUDA OOMs the trainer caught and skipped so far in this run
 */
public record AgentEvent(double ts, String kind, String gpuUuid, Long xid, String runId, String message,
                         RunFailure failure, RunEnding ending, PhaseProgress progress, Long count) {

    public static AgentEvent xid(double ts, String gpuUuid, long xid) {
        return new AgentEvent(ts, EventKind.XID.wireName(), gpuUuid, xid, null, "XID " + xid, null, null, null, null);
    }

    public AgentEvent withRunId(String runId) {
        return new AgentEvent(ts, kind, gpuUuid, xid, runId, message, failure, ending, progress, count);
    }

    /** What {@link #kind()} stands for ({@link EventKind#OTHER} for a kind of a newer agent). */
    public EventKind eventKind() {
        return EventKind.of(kind);
    }
}
