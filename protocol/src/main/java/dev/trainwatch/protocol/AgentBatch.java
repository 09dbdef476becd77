package dev.trainwatch.protocol;

import java.util.List;

/**
 * The body of {@code POST /v1/samples}: what one agent saw since its previous batch.
 *
 * @param agentId stable id of the agent instance (host plus a random suffix persisted with the spool)
 * @param seq     per-agent sequence number, strictly increasing; the collector de-duplicates replays by it
 * @param gpus    one sample per GPU per poll
 * @param runs    run attribution as of the newest poll
 * @param events  XID errors, lost GPUs, ended runs
 * @param hostMemory the node's RAM and {@code /dev/shm}, when the agent read them
 * @param sentAt  unix seconds on the agent's clock when the batch was made (a spooled batch keeps it), so the
 *                collector can estimate the agent's clock offset; null from older agents
 * @param runSteps step reports the agent read from runs' logs since its previous batch, applied with the batch (a
 *                 replayed batch's steps are not applied again); null when it sends them in their own requests (as
 *                 agents before this field did, and do until a collector has answered that it takes them)
 */
public record AgentBatch(String host, String agentId, long seq, List<GpuSample> gpus, List<RunAttribution> runs,
                         List<AgentEvent> events, AgentHealth health, HostMemory hostMemory, Double sentAt,
                         List<RunSteps> runSteps) {

    // No nine-component constructor: avaje-jsonb 3.11 (TypeReader.determineConstructor) would read batches with it.

    public AgentBatch withoutSteps() {
        return runSteps == null ? this : new AgentBatch(host, agentId, seq, gpus, runs, events, health, hostMemory,
                sentAt, null);
    }
}
