package dev.trainwatch.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;

/**
 * jackson-core's streaming parser with the wire's reading settings, for the agent's reads of its own files: touching
 * {@link Json} would load jackson-databind, which the agent does without.
 */
public final class JsonStreams {

    /** Thread-safe once built; {@link Json}'s mappers start from a copy. */
    public static final JsonFactory FACTORY = JsonFactory.builder()
            // A diverged loss: Python's json.dumps writes NaN/Infinity as bare tokens; Jackson writes "NaN".
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
