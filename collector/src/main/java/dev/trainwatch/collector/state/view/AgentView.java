package dev.trainwatch.collector.state.view;

import dev.trainwatch.protocol.AgentHealth;

/** One agent as the collector knows it; {@code clockOffsetSeconds} is its clock minus ours (null until known). */
public record AgentView(String agentId, String host, long lastSeq, double lastSeenTs, AgentHealth health,
                        int gpuCount, long batches, long duplicates, boolean lost, Double clockOffsetSeconds) {
}
