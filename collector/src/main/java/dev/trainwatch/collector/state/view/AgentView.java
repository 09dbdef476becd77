package dev.trainwatch.collector.state.view;

import dev.trainwatch.protocol.AgentHealth;

/**
 * One agent as the collector knows it. Immutable snapshot.
 *
 * @param agentId     agent id
 * @param host        node
 * @param lastSeq     the batch sequence number applied last
 * @param lastSeenTs  unix seconds (collector clock) of its newest batch
 * @param health      the agent's self-report from its newest batch
 * @param gpuCount    GPUs in its newest batch
 * @param batches     batches applied since the collector started
 * @param duplicates  replayed batches ignored
 * @param lost        no batch for longer than the agent_lost threshold
 * @param clockOffsetSeconds the agent's clock minus the collector's (null until a batch carried {@code sent_at});
 *                    its time stamps are corrected by it
 */
public record AgentView(String agentId, String host, long lastSeq, double lastSeenTs, AgentHealth health,
                        int gpuCount, long batches, long duplicates, boolean lost, Double clockOffsetSeconds) {

    /** A view without a clock offset. */
    public AgentView(String agentId, String host, long lastSeq, double lastSeenTs, AgentHealth health, int gpuCount,
                     long batches, long duplicates, boolean lost) {
        this(agentId, host, lastSeq, lastSeenTs, health, gpuCount, batches, duplicates, lost, null);
    }
}
