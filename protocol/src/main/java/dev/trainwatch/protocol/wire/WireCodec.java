package dev.trainwatch.protocol.wire;

import io.avaje.jsonb.JsonType;
import io.avaje.jsonb.Jsonb;

/**
 * The wire codec generated from the protocol records: avaje-jsonb's annotation processor writes one adapter per record
 * at compile time (this package's {@code package-info} names them), so a change to a record reaches the wire by
 * recompiling, with no reflection and without loading jackson-databind (the agent writes every batch with it).
 *
 * <p>What it writes reads back through {@link dev.trainwatch.protocol.Json#MAPPER} as the same records, and as the same
 * JSON the mapper writes: snake_case names in the records' order, null fields and null map values left out, empty
 * lists kept, doubles spelt as Jackson spells them ({@link JacksonSpelledDoubles}), non-finite ones as the strings
 * {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"} ({@code WireCodecTest} compares the two).
 *
 * <p>Thread-safe; the adapters are built once, on first use.
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
     * The generated adapter of a protocol record (or of a plain value: string, number, boolean, list, map). Its reader
     * is for trusted input such as tests and benchmarks, not for request bodies: avaje-jsonb's reader rounds some
     * doubles of 16–17 digits and is lenient where databind refuses (the collector's {@code PlainRecordReader} says
     * which).
     */
    public static <T> JsonType<T> type(Class<T> type) {
        return JSONB.type(type);
    }

    /** One value (a protocol record, a list of them, or a plain value) as compact UTF-8 JSON. */
    public static byte[] toBytes(Object value) {
        return JSONB.toJsonBytes(value);
    }
}
