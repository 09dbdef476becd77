package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EventKindTest {
    @Test
    void everyKnownKindRoundTripsThroughItsWireName() {
        for (EventKind kind : EventKind.values()) {
            if (kind != EventKind.OTHER) {
                assertThat(EventKind.of(kind.wireName())).isEqualTo(kind);
            }
        }
        assertThat(EventKind.RUN_FAILED.wireName()).isEqualTo("run_failed");
    }

    @Test
    void aKindOfANewerAgentIsOtherNotAnError() throws Exception {
        AgentEvent e = Json.MAPPER.readValue("{\"ts\":1,\"kind\":\"nvlink_down\"}", AgentEvent.class);
        assertThat(e.kind()).isEqualTo("nvlink_down");
        assertThat(e.eventKind()).isEqualTo(EventKind.OTHER);
        assertThat(Json.MAPPER.readValue("{\"ts\":1,\"kind\":\"xid\",\"xid\":79}", AgentEvent.class).eventKind())
                .isEqualTo(EventKind.XID);
        assertThat(EventKind.of(null)).isEqualTo(EventKind.OTHER);
    }

    @Test
    void anEventBuiltFromAKindCarriesItsWireName() throws Exception {
        String json = Json.MAPPER.writeValueAsString(new AgentEvent(5, EventKind.PHASE.wireName(), null, null, "r", "checkpoint", null, null, null, null));
        assertThat(json).contains("\"kind\":\"phase\"");
    }
}
