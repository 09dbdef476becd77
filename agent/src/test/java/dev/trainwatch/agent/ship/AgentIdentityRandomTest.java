package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A new agent's id: the host and eight random hex digits, kept in the spool directory. */
class AgentIdentityRandomTest {

    @TempDir
    Path dir;

    @Test
    void newIdsAreRandom() throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            try (AgentIdentity identity = AgentIdentity.open(dir.resolve("spool-" + i), "node-1")) {
                seen.add(identity.agentId());
            }
        }
        assertThat(seen).hasSizeGreaterThan(45);
    }

    @Test
    void aNewIdIsTheHostAndEightHexDigitsAndStays() throws Exception {
        String id;
        try (AgentIdentity identity = AgentIdentity.open(dir, "node-1")) {
            id = identity.agentId();
        }
        assertThat(id).matches("node-1-[0-9a-f]{8}");
        try (AgentIdentity again = AgentIdentity.open(dir, "node-1")) {
            assertThat(again.agentId()).isEqualTo(id);
        }
    }
}
