package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.DetectorSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The registry's index of agents by host against the scan it replaces ({@code agents()} filtered by host, in its
 * order), through random arrivals, moves between hosts and evictions at the agent limit.
 */
class AgentsByHostTest {

    @Test
    void theIndexGivesWhatAScanOfEveryAgentGives() {
        Random random = new Random(24);
        FleetSettings settings = new FleetSettings(64, 256, 40, Duration.ofMinutes(10), 600, 64, Duration.ofSeconds(1),
                20, Duration.ofHours(1));
        Registry registry = new Registry(settings, DetectorSettings.defaults());
        double now = 1_700_000_000;
        List<String> wrong = new ArrayList<>();
        for (int step = 0; step < 5_000; step++) {
            now += random.nextInt(3) == 0 ? 700 : 1; // now and then long enough for silent agents to be evicted
            String agentId = "agent-" + random.nextInt(60);
            AgentState agent = registry.agent(agentId);
            if (agent == null) {
                try {
                    agent = registry.newAgent(agentId, now);
                } catch (LimitReachedException full) {
                    continue;
                }
            }
            agent.lastSeen = now;
            registry.agentHost(agent, "host-" + random.nextInt(12));
            Set<String> hosts = new LinkedHashSet<>();
            for (int h = random.nextInt(4); h > 0; h--) {
                hosts.add("host-" + random.nextInt(14)); // some hosts no agent is on
            }
            List<AgentState> scan = new ArrayList<>();
            for (AgentState a : registry.agents()) {
                if (a.host != null && hosts.contains(a.host)) {
                    scan.add(a);
                }
            }
            List<AgentState> indexed = registry.agentsOn(hosts);
            if (!indexed.equals(scan)) {
                wrong.add("step " + step + " hosts " + hosts + ": " + ids(indexed) + " against " + ids(scan));
            }
        }
        assertThat(wrong).isEmpty();
    }

    private static List<String> ids(List<AgentState> agents) {
        return agents.stream().map(a -> a.agentId + "@" + a.host).toList();
    }
}
