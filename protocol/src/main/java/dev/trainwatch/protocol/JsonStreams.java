package dev.trainwatch.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;

/**
 * jackson-core's streaming parser with the wire codec's reading settings ({@link Json#newMapper()}: bare
 * {@code NaN}/{@code Infinity} accepted, the same nesting, string and number limits), for the agent's few reads of
 * its own files. Reading through it loads jackson-core's parser alone; touching {@link Json} loads jackson-databind,
 * which the agent does not need (docs/PERFORMANCE.md, "Agent: side by side").
 */
public final class JsonStreams {

    /** Thread-safe once built. */
    public static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .disable(StreamReadFeature.AUTO_CLOSE_SOURCE)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(64)
                    .maxStringLength(1_000_000)
                    .maxNumberLength(64)
                    .build())
            .build();

    private JsonStreams() {
    }
}
