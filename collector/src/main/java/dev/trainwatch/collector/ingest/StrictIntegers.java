package dev.trainwatch.collector.ingest;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.deser.std.NumberDeserializers;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.IOException;

/**
 * Integer fields that refuse {@code NaN} and {@code ±Infinity}. The wire codec accepts those bare tokens (a diverged
 * loss is written so by Python's {@code json.dumps}), and Jackson coerces a float to an integer field by truncation,
 * which makes {@code NaN} a 0 that passes every range check. Finite floats keep being truncated as before.
 *
 * <p>Kept (issue #41): no Jackson setting refuses only non-finite floats for an integer. Disabling
 * {@code ACCEPT_FLOAT_AS_INT}, or a coercion config of Float to Integer that fails, refuses every float, and with it
 * the {@code "step": 100.0} a Python script writes when its counter is a float. Upstream: a jackson-databind issue to
 * refuse a non-finite float coerced to an integer (as {@code FAIL_ON_NAN_TO_BIG_DECIMAL_COERCION}, databind#4195, does
 * for {@code BigDecimal}), to be filed; with it, this module goes.
 */
final class StrictIntegers {

    private StrictIntegers() {
    }

    static SimpleModule module() {
        SimpleModule module = new SimpleModule("trainwatch-strict-integers");
        module.addDeserializer(Long.class, new Strict<>(Long.class));
        module.addDeserializer(Long.TYPE, new Strict<>(Long.TYPE));
        module.addDeserializer(Integer.class, new Strict<>(Integer.class));
        module.addDeserializer(Integer.TYPE, new Strict<>(Integer.TYPE));
        return module;
    }

    private static void refuseNonFinite(JsonParser p, Class<?> type) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_FLOAT && !Double.isFinite(p.getDoubleValue())) {
            throw MismatchedInputException.from(p, type, "non-finite number " + p.getText() + " for an integer");
        }
    }

    /** Delegates to Jackson's own deserializer for the type, after refusing a non-finite number. */
    private static final class Strict<T> extends StdScalarDeserializer<T> {
        private static final long serialVersionUID = 1L;
        private final StdScalarDeserializer<T> jackson;

        @SuppressWarnings("unchecked")
        Strict(Class<T> type) {
            super(type);
            this.jackson = (StdScalarDeserializer<T>)
                    NumberDeserializers.find(type, type.getName());
        }

        @Override
        public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            refuseNonFinite(p, handledType());
            return jackson.deserialize(p, ctxt);
        }

        @Override
        public T getNullValue(DeserializationContext ctxt) throws JsonMappingException {
            return jackson.getNullValue(ctxt);
        }

        @Override
        public LogicalType logicalType() {
            return jackson.logicalType();
        }
    }
}
