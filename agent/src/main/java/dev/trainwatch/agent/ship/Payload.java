package dev.trainwatch.agent.ship;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.wire.Gzip;
import dev.trainwatch.protocol.wire.WireCodec;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A gzip-compressed JSON request body with where it goes, before it gets its place in the send order; {@code what}
 * names it in log lines, {@code carriesSteps} for a batch with {@code run_steps}. Written by the codec generated
 * from the records ({@link WireCodec}; read back by {@link Json#MAPPER}). Immutable.
 */
public record Payload(String method, String path, byte[] gzipBody, String what, boolean carriesSteps) {

    /** Where batches go. */
    public static final String SAMPLES_PATH = "/v1/samples";

    /** {@code POST /v1/samples}, with the steps it carries ({@code run_steps}) when it does. */
    public static Payload samples(AgentBatch batch) {
        int steps = batch.runSteps() == null ? 0
                : batch.runSteps().stream().mapToInt(g -> g.steps() == null ? 0 : g.steps().size()).sum();
        return new Payload("POST", SAMPLES_PATH, gzipJson(batch), "samples seq " + batch.seq()
                + (batch.runSteps() == null ? "" : " with " + steps + " steps"), batch.runSteps() != null);
    }

    /** {@code POST /v1/runs/{run_id}/steps}, {@code ?agent_id=…} unless null: the collector moves the steps' times by that agent's offset. */
    public static Payload steps(String runId, List<StepEvent> steps, String agentId) {
        String query = agentId == null ? "" : "?agent_id=" + pathSegment(agentId);
        return new Payload("POST", "/v1/runs/" + pathSegment(runId) + "/steps" + query, gzipJson(steps),
                steps.size() + " steps of run " + runId, false);
    }

    /** {@code PUT /v1/runs/{run_id}} with the run's spec. */
    public static Payload runSpec(String runId, RunSpec spec) {
        return new Payload("PUT", "/v1/runs/" + pathSegment(runId), gzipJson(spec), "spec of run " + runId, false);
    }

    static byte[] gzipJson(Object value) {
        return Gzip.fastest(WireCodec.toBytes(value));
    }

    /** Percent-encodes a path segment: RFC 3986 unreserved characters stay, every other UTF-8 byte is escaped. */
    static String pathSegment(String value) {
        // URLEncoder is for forms: it keeps '*', writes a space as '+' and escapes '~'
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("*", "%2A").replace("+", "%20")
                .replace("%7E", "~");
    }
}
