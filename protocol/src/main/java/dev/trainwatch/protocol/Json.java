package dev.trainwatch.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The JSON codec of the wire contract: snake_case names, nulls omitted, unknown fields ignored (newer agents may
 * send more), and {@link JsonStreams}' reading settings. The mapper is thread-safe once built; share {@link #MAPPER}.
 */
public final class Json {

    /** The shared, configured mapper. Do not reconfigure it. */
    public static final ObjectMapper MAPPER = newMapper();

    private Json() {
    }

    /** A new mapper with the contract's settings (for callers that need to add modules of their own). */
    public static ObjectMapper newMapper() {
        return JsonMapper.builder(JsonStreams.FACTORY.copy())
                .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .defaultPropertyInclusion(JsonInclude.Value.construct(JsonInclude.Include.NON_NULL, JsonInclude.Include.NON_NULL))
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .build();
    }
}
