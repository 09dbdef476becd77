package dev.trainwatch.collector.state;

import dev.trainwatch.protocol.AgentHealth;

/** One agent: de-duplication and liveness. Guarded by the fleet's lock. */
final class AgentState {

    final String agentId;
    String host;
    long lastSeq = Long.MIN_VALUE;
    double lastSeen;
    AgentHealth health;
    int gpuCount;
    long batches;
    long duplicates;
    /** Seconds between this agent's two latest batches (NaN before its second): its --ship-every, give or take. */
    double batchGap = Double.NaN;
    boolean lost;
    /** The agent's clock minus the collector's, estimated from its batches' send times. */
    final ClockOffset clock = new ClockOffset();
    boolean warnedClock;
    /** Its place in {@link Registry#agents()}' order when the registry last indexed agents by host. */
    int order;

    AgentState(String agentId) {
        this.agentId = agentId;
    }

    Double intervalSeconds() {
        return health != null && health.intervalSeconds() != null && health.intervalSeconds() > 0
                ? health.intervalSeconds() : null;
    }
}
