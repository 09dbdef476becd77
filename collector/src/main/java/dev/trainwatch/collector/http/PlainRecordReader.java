package dev.trainwatch.collector.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The fast path of {@link BodyDecoder} for a body in the plain shape agents send: a JSON object whose fields are
 * numbers, strings, booleans, arrays and objects of the record's own component types, with no nulls, no duplicates
 * and no value Jackson would have to coerce (a string for a number, a float for an integer). Such a body is read
 * straight into the record with jackson-core's tokens and the record's canonical constructor, without databind's
 * per-property machinery (the largest part of decoding a batch). Anything else — any other token, a null, a missing
 * primitive, a duplicate field, a number out of range, a field of a type this reader does not handle (an event's
 * failure details), a malformed body — makes {@link #read} answer null, and the caller reads the body with the
 * wire codec's databind reader as before: its value, or its error and message, are what the collector answers.
 * For the bodies read here the result equals databind's ({@code PlainRecordReaderTest} compares them).
 *
 * <p>What a type holds is taken from its record components at start, their JSON names by the wire codec's
 * snake_case naming; a type with a Jackson annotation on a component, or a component of another type, is never
 * read here when present. Immutable and thread-safe.
 */
final class PlainRecordReader<T extends Record> {

    private final JsonFactory factory;
    private final Shape root;

    PlainRecordReader(JsonFactory factory, Class<T> type) {
        this.factory = factory;
        this.root = Shape.of(type, new HashMap<>());
    }

    /** The record, or null when the body is not in the plain shape (or is not valid JSON at all). */
    @SuppressWarnings("unchecked")
    T read(byte[] json, int length) {
        try (JsonParser p = factory.createParser(json, 0, length)) {
            Object value = readRecord(p, p.nextToken(), root);
            if (p.nextToken() != null) {
                return null; // trailing tokens: databind refuses them
            }
            return (T) value;
        } catch (IOException | RuntimeException e) { // Bail included
            return null;
        }
    }

    /**
     * A JSON array of the records (step reports come so), or null when the body is not an array of them in the
     * plain shape: a null element, any element the plain shape refuses, trailing tokens, invalid JSON.
     */
    @SuppressWarnings("unchecked")
    List<T> readList(byte[] json, int length) {
        try (JsonParser p = factory.createParser(json, 0, length)) {
            if (p.nextToken() != JsonToken.START_ARRAY) {
                return null;
            }
            List<T> out = new ArrayList<>();
            for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
                out.add((T) readRecord(p, t, root)); // anything but an object (null, end of input) bails
            }
            return p.nextToken() == null ? out : null;
        } catch (IOException | RuntimeException e) { // Bail included
            return null;
        }
    }

    /** Leaves the fast path; carries no stack trace. */
    private static final class Bail extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Bail() {
            super(null, null, false, false);
        }
    }

    private static final Bail BAIL = new Bail();

    private enum Kind { DOUBLE, LONG, INT, STRING, BOOLEAN, LIST, RECORD, OTHER }

    /** One component: its kind, whether it is primitive (must be present), and what a list or record holds. */
    private record Field(Kind kind, boolean primitive, Field element, Shape shape) {
    }

    /** A record type as read here: its fields by JSON name and its canonical constructor. */
    private static final class Shape {
        final Map<String, Integer> index = new HashMap<>();
        /** The JSON names in the record's order, for {@link JsonParser#nextFieldName(SerializableString)}. */
        SerializableString[] names;
        Field[] fields;
        Constructor<?> constructor;
        /** False when the type cannot be read here (then a value of it makes the reader give up). */
        boolean plain;

        static Shape of(Class<?> type, Map<Class<?>, Shape> known) {
            Shape shape = known.get(type);
            if (shape != null) {
                return shape;
            }
            shape = new Shape();
            known.put(type, shape);
            RecordComponent[] components = type.getRecordComponents();
            if (components == null || components.length > 64 || type.getAnnotations().length > 0) {
                return shape;
            }
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (c.getAnnotations().length > 0) {
                    return shape; // a creator of its own
                }
            }
            for (java.lang.reflect.Method m : type.getDeclaredMethods()) {
                if (m.isAnnotationPresent(com.fasterxml.jackson.annotation.JsonCreator.class)) {
                    return shape;
                }
            }
            PropertyNamingStrategies.NamingBase snake = (PropertyNamingStrategies.NamingBase)
                    PropertyNamingStrategies.SNAKE_CASE;
            Class<?>[] types = new Class<?>[components.length];
            Field[] fields = new Field[components.length];
            SerializableString[] names = new SerializableString[components.length];
            for (int i = 0; i < components.length; i++) {
                RecordComponent c = components[i];
                if (c.getAnnotations().length > 0 || c.getAccessor().getAnnotations().length > 0) {
                    return shape; // renamed, ignored or otherwise special: databind's to read
                }
                types[i] = c.getType();
                fields[i] = field(c.getGenericType(), known);
                // Interned, as jackson-core interns the names it reads: the lookup's equals is then a comparison
                // of references.
                String name = snake.translate(c.getName()).intern();
                shape.index.put(name, i);
                names[i] = new SerializedString(name);
            }
            try {
                shape.constructor = type.getDeclaredConstructor(types);
                shape.constructor.setAccessible(true);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return shape;
            }
            shape.fields = fields;
            shape.names = names;
            shape.plain = true;
            return shape;
        }

        private static Field field(Type type, Map<Class<?>, Shape> known) {
            if (type == double.class || type == Double.class) {
                return new Field(Kind.DOUBLE, type == double.class, null, null);
            }
            if (type == long.class || type == Long.class) {
                return new Field(Kind.LONG, type == long.class, null, null);
            }
            if (type == int.class || type == Integer.class) {
                return new Field(Kind.INT, type == int.class, null, null);
            }
            if (type == String.class) {
                return new Field(Kind.STRING, false, null, null);
            }
            if (type == Boolean.class) {
                return new Field(Kind.BOOLEAN, false, null, null);
            }
            if (type instanceof ParameterizedType list && list.getRawType() == List.class) {
                return new Field(Kind.LIST, false, field(list.getActualTypeArguments()[0], known), null);
            }
            if (type instanceof Class<?> c && c.isRecord()) {
                return new Field(Kind.RECORD, false, null, of(c, known));
            }
            return new Field(Kind.OTHER, type instanceof Class<?> c && c.isPrimitive(), null, null);
        }
    }

    private static Object readRecord(JsonParser p, JsonToken token, Shape shape) throws IOException {
        if (token != JsonToken.START_OBJECT || !shape.plain) {
            throw BAIL;
        }
        Field[] fields = shape.fields;
        SerializableString[] names = shape.names;
        Object[] args = new Object[fields.length];
        long seen = 0;
        // Writers put the fields in the record's order (the wire codec and the agent's WireWriter do, leaving out
        // nulls), so the next field is first compared, byte for byte, with the name expected next: a match costs
        // no name parsing and no look-up. Any other name is parsed and looked up as usual.
        int expected = 0;
        for (;;) {
            int i;
            if (expected < names.length && p.nextFieldName(names[expected])) {
                i = expected;
            } else {
                JsonToken t = expected < names.length ? p.currentToken() : p.nextToken();
                if (t == JsonToken.END_OBJECT) {
                    break;
                }
                if (t != JsonToken.FIELD_NAME) {
                    throw BAIL;
                }
                Integer known = shape.index.get(p.currentName());
                if (known == null) {
                    p.nextToken();
                    p.skipChildren(); // unknown fields are ignored (newer agents send more)
                    continue;
                }
                i = known;
            }
            expected = i + 1;
            JsonToken value = p.nextToken();
            long bit = 1L << i;
            if ((seen & bit) != 0) {
                throw BAIL;
            }
            seen |= bit;
            args[i] = value(p, value, fields[i]);
        }
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].primitive() && (seen & (1L << i)) == 0) {
                throw BAIL;
            }
        }
        try {
            return shape.constructor.newInstance(args);
        } catch (ReflectiveOperationException e) {
            throw BAIL;
        }
    }

    private static Object value(JsonParser p, JsonToken token, Field field) throws IOException {
        switch (field.kind()) {
            case DOUBLE:
                if (token == JsonToken.VALUE_NUMBER_FLOAT || token == JsonToken.VALUE_NUMBER_INT) {
                    return p.getDoubleValue();
                }
                break;
            case LONG:
                if (token == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
                    return p.getLongValue();
                }
                break;
            case INT:
                if (token == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
                    return p.getIntValue();
                }
                break;
            case STRING:
                if (token == JsonToken.VALUE_STRING) {
                    return p.getText();
                }
                break;
            case BOOLEAN:
                if (token == JsonToken.VALUE_TRUE) {
                    return Boolean.TRUE;
                }
                if (token == JsonToken.VALUE_FALSE) {
                    return Boolean.FALSE;
                }
                break;
            case LIST:
                if (token == JsonToken.START_ARRAY) {
                    List<Object> out = new ArrayList<>();
                    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
                        out.add(value(p, t, field.element()));
                    }
                    return out;
                }
                break;
            case RECORD:
                return readRecord(p, token, field.shape());
            default:
                break;
        }
        throw BAIL;
    }
}
