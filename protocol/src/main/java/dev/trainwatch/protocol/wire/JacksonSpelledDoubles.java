package dev.trainwatch.protocol.wire;

import io.avaje.json.JsonAdapter;
import io.avaje.json.JsonReader;
import io.avaje.json.JsonWriter;

/**
 * Doubles spelt as Jackson spells them ({@link Double#toString}: {@code 1.7E9}, {@code -0.0}), so the bytes the agent
 * sends and keeps are the ones it sent before the codec was generated; avaje-jsonb's own writer spells the same values
 * {@code 1700000000.0} and {@code 0.0}. Non-finite values go to avaje-jsonb's writer, which writes the strings
 * {@code "NaN"}, {@code "Infinity"} and {@code "-Infinity"} as Jackson does. Reading is avaje-jsonb's.
 * Stateless; thread-safe.
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
