package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentIdentityTest {

    @TempDir
    Path dir;

    @Test
    void keepsItsIdAndContinuesItsSequenceAfterARestart() throws Exception {
        String id;
        long last = -1;
        try (AgentIdentity identity = AgentIdentity.open(dir, "gpu-node-7")) {
            id = identity.agentId();
            assertThat(id).startsWith("gpu-node-7-");
            for (int i = 0; i < 1500; i++) {
                long seq = identity.nextSeq();
                assertThat(seq).isGreaterThan(last);
                last = seq;
            }
        }
        try (AgentIdentity restarted = AgentIdentity.open(dir, "gpu-node-7")) {
            assertThat(restarted.agentId()).isEqualTo(id);
            assertThat(restarted.nextSeq()).isGreaterThan(last);
        }
    }

    @Test
    void aSecondAgentCannotShareTheDirectory() throws Exception {
        try (AgentIdentity first = AgentIdentity.open(dir, "h")) {
            assertThatThrownBy(() -> AgentIdentity.open(dir, "h")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("in use by another trainwatch agent");
        }
        AgentIdentity.open(dir, "h").close();
    }

    @Test
    void aCorruptLeaseIsReportedInOneLine() throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("seq-lease"), "garbage");
        assertThatThrownBy(() -> AgentIdentity.open(dir, "h")).hasMessageContaining("corrupt seq-lease");
        AgentIdentity.open(dir.resolve("other"), "h").close();
    }
}
