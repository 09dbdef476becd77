package dev.trainwatch.collector.state;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Nodes that send under one agent id (started from one cloned image or spool directory): the second node's batches
 * are kept apart under {@code id@host} — their own liveness and de-duplication — so neither node's data is dropped as
 * the other's replay; one line says so, and {@link #clashOf} gives each node's answers a sentence to log. An id seen
 * from another host after its first host fell silent for {@value #LIVE_SECONDS} s is the same agent moved (its
 * host renamed), not a clone. Bounded; used under the {@link Fleet}'s lock.
 */
final class AgentClones {

    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);
    /** An agent heard from within this many seconds is live: another host under its id is a clone. */
    static final double LIVE_SECONDS = 60;
    private static final int MAX_IDS = 1024;
    private static final int MAX_HOSTS_PER_ID = 16;

    /** The hosts of each shared id, the first one (which keeps the plain id) first. */
    private final Map<String, Set<String>> hostsById = AppliedLedger.lru(MAX_IDS, true);

    /** The key the batch's agent state and applied seqs are kept under. */
    String keyFor(Registry registry, String agentId, String host, double now) {
        Set<String> hosts = hostsById.get(agentId);
        if (hosts != null && hosts.contains(host)) {
            return hosts.iterator().next().equals(host) ? agentId : agentId + "@" + host;
        }
        AgentState first = registry.agent(agentId);
        if (first == null || first.host == null || first.host.equals(host) || now - first.lastSeen > LIVE_SECONDS) {
            return agentId;
        }
        if (hosts == null) {
            hosts = new LinkedHashSet<>();
            hosts.add(first.host);
            hostsById.put(agentId, hosts);
        }
        if (hosts.size() >= MAX_HOSTS_PER_ID) {
            return agentId + "@" + host;
        }
        hosts.add(host);
        LOG.log(System.Logger.Level.WARNING, "agent id " + agentId + " is sent by " + hosts.size() + " nodes ("
                + String.join(", ", hosts) + "), a cloned image or spool directory: each node's batches are kept"
                + " apart; give each its own id (remove agent-id in the spool directory of the clones, restart them)");
        return agentId + "@" + host;
    }

    /** The sentence a node sharing its agent id is told in each answer, or empty when it shares none. */
    Optional<String> clashOf(String agentId, String host) {
        Set<String> hosts = hostsById.get(agentId);
        if (hosts == null || !hosts.contains(host)) {
            return Optional.empty();
        }
        List<String> others = new ArrayList<>(hosts);
        others.remove(host);
        return Optional.of("agent id " + agentId + " is also sent by " + String.join(", ", others)
                + " (a cloned image or spool directory?): the collector keeps each node's batches apart; give each"
                + " node its own id by removing agent-id in the spool directory of the clones and restarting them");
    }
}
