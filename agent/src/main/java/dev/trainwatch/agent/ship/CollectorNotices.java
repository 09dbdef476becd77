package dev.trainwatch.agent.ship;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the collector tells an agent in its answers that the operator must hear, logged once per process: another
 * node sends under this agent's id ({@code agent_id_clash}: a cloned image or spool directory). Thread-safe.
 */
final class CollectorNotices {

    private static final System.Logger LOG = System.getLogger(CollectorNotices.class.getName());
    private static final String CLASH = "agent_id_clash";

    private final AtomicBoolean clashLogged = new AtomicBoolean();

    /** Looks at an answer's body (the start of it); says a clash once. */
    void read(String body) {
        if (body == null || !body.contains(CLASH) || clashLogged.get()) {
            return;
        }
        try {
            JsonNode clash = Json.MAPPER.readTree(body).get(CLASH);
            if (clash != null && clash.isTextual() && clashLogged.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "the collector says: " + clash.asText());
            }
        } catch (IOException notWholeJson) {
            // The body was cut at the log limit; the next answer is read again.
        }
    }
}
