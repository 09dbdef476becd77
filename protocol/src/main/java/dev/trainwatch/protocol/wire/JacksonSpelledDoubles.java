package dev.trainwatch.protocol.wire;

import io.avaje.json.JsonAdapter;
import io.avaje.json.JsonReader;
import io.avaje.json.JsonWriter;

/**
 * Doubles spelt as Jackson spells them ({@code 1.7E9}, {@code -0.0}) so the wire bytes stay Jackson's; non-finite
 * values and reading are avaje-jsonb's. Thread-safe.
 */
final class JacksonSpelledDoubles implements JsonAdapter<Double> {

    @Override
    public void toJson(JsonWriter writer, Double value) {
        if (value == null) {
            writer.nullValue();
        } else if (Double.isFinite(value)) {
            writer.rawValue(Double.toString(value));
        } else {
            writer.value(value.doubleValue());
        }
    }

    @Override
    public Double fromJson(JsonReader reader) {
        return reader.readDouble();
    }
}
