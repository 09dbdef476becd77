package dev.trainwatch.protocol.wire;

import io.avaje.jsonb.JsonType;
import io.avaje.jsonb.Jsonb;

/**
 * The wire codec avaje-jsonb's annotation processor generates from the protocol records at compile time: no
 * reflection, no jackson-databind in the agent. It writes what {@link dev.trainwatch.protocol.Json#MAPPER} writes
 * (snake_case, nulls left out, Jackson's doubles, non-finite as strings): {@code WireCodecTest} compares the two.
 * Thread-safe.
 */
public final class WireCodec {

    private static final Jsonb JSONB = Jsonb.builder()
            .serializeNulls(false)
            .serializeEmpty(true)
            .failOnUnknown(false)
            .add(Double.class, new JacksonSpelledDoubles().nullSafe())
            .add(Double.TYPE, new JacksonSpelledDoubles())
            .build();

    private WireCodec() {
    }

    /**
     * The generated adapter of a protocol record or plain value. Its reader is for trusted input only: it rounds some
     * 16–17 digit doubles and is lenient where databind refuses.
     */
    public static <T> JsonType<T> type(Class<T> type) {
        return JSONB.type(type);
    }

    /** One value (a protocol record, a list of them, or a plain value) as compact UTF-8 JSON. */
    public static byte[] toBytes(Object value) {
        return JSONB.toJsonBytes(value);
    }
}
