package dev.trainwatch.collector.ingest;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.io.NumberInput;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The fast path of {@link BodyDecoder} for a body in the plain shape agents send: a JSON object of numbers, strings,
 * booleans, arrays and objects of the record's own component types, with no nulls, no duplicates and nothing Jackson
 * would coerce, read straight from its bytes into the record's canonical constructor (no databind properties, no
 * jackson-core tokens). Anything else makes {@link #read} answer null and the caller uses databind, whose value or
 * error is then the answer; for what is read here the result equals databind's ({@code PlainRecordReaderTest}).
 * Types come from the record components, names by the codec's snake_case; an annotated type or component is left to
 * databind. Immutable and thread-safe.
 *
 * <p>A second implementation of a library, kept under issue #41's rule (docs/PERFORMANCE.md, "Hand-written copies"):
 * {@code DecodeCpu} reads the 40-reading batch in 59 µs of CPU against databind's 129 µs, 7–11 % of the collector's
 * CPU at 1,024 GPUs with {@code --ship-every 10s}. The generated codec ({@code WireCodec}, avaje-jsonb 3.11) cannot
 * stand in: it rounds some 16–17 digit doubles to a neighbour and is lenient where databind refuses. Upstream: an
 * avaje-jsonb issue for exact doubles and a strict mode (to be filed); with both, this reader goes.
 */
final class PlainRecordReader<T extends Record> {

    private final Field root;
    private final Field list;
    private final StreamReadConstraints limits;

    /** @param limits the wire codec's limits: a body at or beyond any of them is left to databind */
    PlainRecordReader(StreamReadConstraints limits, Class<T> type) {
        this.root = new Field(Kind.RECORD, false, null, Shape.of(type, new HashMap<>()));
        this.list = new Field(Kind.LIST, false, root, null);
        this.limits = limits;
    }

    /** The record, or null when the body is not in the plain shape (or is not valid JSON at all). */
    @SuppressWarnings("unchecked")
    T read(byte[] json, int length) {
        return (T) readWhole(json, length, root);
    }

    /** A JSON array of the records (step reports), or null when it is not one in the plain shape. */
    @SuppressWarnings("unchecked")
    List<T> readList(byte[] json, int length) {
        return (List<T>) readWhole(json, length, list);
    }

    private Object readWhole(byte[] json, int length, Field field) {
        try {
            Cursor in = new Cursor(json, length, limits);
            Object value = value(in, field);
            return in.atEnd() ? value : null; // trailing tokens: databind refuses them
        } catch (RuntimeException e) { // Bail included
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
        /** The JSON names in the record's order, quoted and followed by a colon, as UTF-8. */
        byte[][] quoted;
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
            for (Method m : type.getDeclaredMethods()) {
                if (m.isAnnotationPresent(JsonCreator.class)) {
                    return shape;
                }
            }
            PropertyNamingStrategies.NamingBase snake = (PropertyNamingStrategies.NamingBase)
                    PropertyNamingStrategies.SNAKE_CASE;
            Class<?>[] types = new Class<?>[components.length];
            Field[] fields = new Field[components.length];
            byte[][] quoted = new byte[components.length][];
            for (int i = 0; i < components.length; i++) {
                RecordComponent c = components[i];
                if (c.getAnnotations().length > 0 || c.getAccessor().getAnnotations().length > 0) {
                    return shape; // renamed, ignored or otherwise special: databind's to read
                }
                types[i] = c.getType();
                fields[i] = field(c.getGenericType(), known);
                String name = snake.translate(c.getName());
                shape.index.put(name, i);
                quoted[i] = ('"' + name + "\":").getBytes(StandardCharsets.UTF_8);
            }
            try {
                shape.constructor = type.getDeclaredConstructor(types);
                shape.constructor.setAccessible(true);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return shape;
            }
            shape.fields = fields;
            shape.quoted = quoted;
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

    private static Object readRecord(Cursor in, Shape shape) {
        if (!shape.plain || in.next() != '{') {
            throw BAIL;
        }
        in.open();
        Field[] fields = shape.fields;
        byte[][] names = shape.quoted;
        Object[] args = new Object[fields.length];
        long seen = 0;
        // Writers put the fields in the record's order, leaving out nulls: the next name is compared byte for byte
        // with the one expected and the one after; any other name is decoded and looked up.
        int expected = 0;
        if (in.next() != '}') {
            in.back();
            for (;;) {
                in.skipSpace();
                int i;
                if (expected < names.length && in.skipIf(names[expected])) {
                    i = expected;
                } else if (expected + 1 < names.length && in.skipIf(names[expected + 1])) {
                    i = expected + 1;
                } else {
                    Integer known = shape.index.get(in.name());
                    in.expect(':');
                    if (known == null) {
                        in.skipValue(); // unknown fields are ignored (newer agents send more)
                        if (in.endOf('}')) {
                            break;
                        }
                        continue;
                    }
                    i = known;
                }
                expected = i + 1;
                long bit = 1L << i;
                if ((seen & bit) != 0) {
                    throw BAIL; // a duplicate: databind keeps the last, this reader does not guess
                }
                seen |= bit;
                args[i] = value(in, fields[i]);
                if (in.endOf('}')) {
                    break;
                }
            }
        }
        in.close();
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

    private static Object value(Cursor in, Field field) {
        return switch (field.kind()) {
            case DOUBLE -> in.decimal();
            case LONG -> in.integer(Long.MIN_VALUE, Long.MAX_VALUE);
            case INT -> (int) in.integer(Integer.MIN_VALUE, Integer.MAX_VALUE);
            case STRING -> {
                in.skipSpace();
                yield in.string();
            }
            case BOOLEAN -> in.bool();
            case LIST -> {
                if (in.next() != '[') {
                    throw BAIL;
                }
                in.open();
                List<Object> out = new ArrayList<>();
                if (in.next() != ']') {
                    in.back();
                    do {
                        out.add(value(in, field.element()));
                    } while (!in.endOf(']'));
                }
                in.close();
                yield out;
            }
            case RECORD -> readRecord(in, field.shape());
            default -> throw BAIL;
        };
    }

    /**
     * A position in the body and the strict JSON grammar (RFC 8259) over it, reading what jackson-core reads to the
     * same value; anything it is not sure of throws {@link #BAIL}.
     */
    static final class Cursor {
        /** Exact powers of ten as doubles (10^22 is the largest a double holds exactly). */
        private static final double[] POWERS = new double[23];

        static {
            double p = 1;
            for (int i = 0; i < POWERS.length; i++) {
                POWERS[i] = p;
                p *= 10;
            }
        }

        private final byte[] b;
        private final int end;
        private final StreamReadConstraints limits;
        private int pos;
        private int depth;
        private CharsetDecoder utf8;

        Cursor(byte[] b, int end, StreamReadConstraints limits) {
            this.b = b;
            this.end = end;
            this.limits = limits;
        }

        /** Into an object or array: one level deeper, and at the codec's nesting limit, a bail. */
        void open() {
            if (++depth >= limits.getMaxNestingDepth()) {
                throw BAIL;
            }
        }

        void close() {
            depth--;
        }

        boolean atEnd() {
            skipSpace();
            return pos == end;
        }

        /** The next byte that is not JSON whitespace, consumed; the end of the body bails. */
        int next() {
            skipSpace();
            if (pos >= end) {
                throw BAIL;
            }
            return b[pos++];
        }

        /** After a member or element: true at {@code close}, false at a comma; anything else bails. */
        boolean endOf(char close) {
            int c = next();
            if (c == close) {
                return true;
            }
            if (c != ',') {
                throw BAIL;
            }
            return false;
        }

        /** A field's name (the cursor on its opening quote); names longer than jackson-core's limit bail. */
        String name() {
            String name = string();
            if (name.length() >= limits.getMaxNameLength()) {
                throw BAIL;
            }
            return name;
        }

        /** Steps back over the byte {@link #next} returned. */
        void back() {
            pos--;
        }

        void skipSpace() {
            while (pos < end) {
                byte c = b[pos];
                if (c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t')) {
                    return; // every JSON whitespace byte is at most a space: one compare for the rest
                }
                pos++;
            }
        }

        void expect(char c) {
            if (next() != c) {
                throw BAIL;
            }
        }

        /** Consumes {@code bytes} when they come next; compared eight bytes at a time. */
        boolean skipIf(byte[] bytes) {
            int n = bytes.length;
            if (end - pos < n) {
                return false;
            }
            int i = 0;
            for (; i + 8 <= n; i += 8) {
                if ((long) LONGS.get(b, pos + i) != (long) LONGS.get(bytes, i)) {
                    return false;
                }
            }
            for (; i < n; i++) {
                if (b[pos + i] != bytes[i]) {
                    return false;
                }
            }
            pos += n;
            return true;
        }

        /** A string (the cursor on its opening quote), decoded. */
        String string() {
            if (pos >= end || b[pos] != '"') {
                throw BAIL;
            }
            int start = ++pos;
            while (pos < end) {
                byte c = b[pos];
                if (c == '"') {
                    if (pos - start >= limits.getMaxStringLength()) {
                        throw BAIL;
                    }
                    return new String(b, start, pos++ - start, StandardCharsets.ISO_8859_1);
                }
                if (c == '\\' || c < 0x20) { // an escape, a control character or a byte of a multi-byte character
                    pos = start;
                    return slowString();
                }
                pos++;
            }
            throw BAIL;
        }

        /** A string with escapes or non-ASCII characters, from just after its opening quote. */
        private String slowString() {
            StringBuilder out = new StringBuilder();
            int start = pos;
            int run = pos;
            while (pos < end) {
                byte c = b[pos];
                if (c == '"') {
                    appendUtf8(out, run, pos);
                    pos++;
                    if (pos - start >= limits.getMaxStringLength()) {
                        throw BAIL;
                    }
                    return out.toString();
                }
                if (c >= 0 && c < 0x20) {
                    throw BAIL; // unescaped control characters are not JSON
                }
                if (c != '\\') {
                    pos++;
                    continue;
                }
                appendUtf8(out, run, pos);
                if (pos + 1 >= end) {
                    throw BAIL;
                }
                byte e = b[pos + 1];
                pos += 2;
                switch (e) {
                    case '"', '\\', '/' -> out.append((char) e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (end - pos < 4) {
                            throw BAIL;
                        }
                        int v = 0;
                        for (int k = 0; k < 4; k++) {
                            int d = Character.digit(b[pos++], 16);
                            if (d < 0) {
                                throw BAIL;
                            }
                            v = v << 4 | d;
                        }
                        out.append((char) v);
                    }
                    default -> throw BAIL;
                }
                run = pos;
            }
            throw BAIL;
        }

        /** Appends {@code b[from, to)}, which must be well-formed UTF-8 (anything else is left to jackson-core). */
        private void appendUtf8(StringBuilder out, int from, int to) {
            boolean ascii = true;
            for (int i = from; i < to && ascii; i++) {
                ascii = b[i] >= 0;
            }
            if (ascii) { // the usual run between escapes: no decoder
                for (int i = from; i < to; i++) {
                    out.append((char) b[i]);
                }
                return;
            }
            if (utf8 == null) { // one strict decoder per body, made only when a string has a multi-byte character
                utf8 = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT);
            }
            try {
                out.append(utf8.reset().decode(ByteBuffer.wrap(b, from, to - from)));
            } catch (CharacterCodingException e) {
                throw BAIL;
            }
        }

        Boolean bool() {
            skipSpace();
            if (skipWord(TRUE)) {
                return Boolean.TRUE;
            }
            if (skipWord(FALSE)) {
                return Boolean.FALSE;
            }
            throw BAIL;
        }

        private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
        private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
        private static final byte[] NULL = {'n', 'u', 'l', 'l'};
        private static final byte[] NAN = {'N', 'a', 'N'};
        private static final byte[] INFINITY = "Infinity".getBytes(StandardCharsets.US_ASCII);

        private boolean skipWord(byte[] word) {
            if (!skipIf(word)) {
                return false;
            }
            if (pos < end && !delimiter(b[pos])) {
                throw BAIL;
            }
            return true;
        }

        private static boolean delimiter(byte c) {
            return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
        }

        private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(
                long[].class, ByteOrder.LITTLE_ENDIAN);

        /** An integer token within [min, max]; a fraction, an exponent or a larger integer bails. */
        long integer(long min, long max) {
            skipSpace();
            int start = pos;
            boolean negative = pos < end && b[pos] == '-';
            if (negative) {
                pos++;
            }
            int digits = pos;
            long u = digits(0, Math.min(end, pos + 16)); // 16 digits cannot overflow a long
            long v = -u; // from here accumulated negative: Long.MIN_VALUE has no positive counterpart
            while (pos < end) {
                int d = b[pos] - '0';
                if (d < 0 || d > 9) {
                    break;
                }
                if (v < (Long.MIN_VALUE + d) / 10) {
                    throw BAIL;
                }
                v = v * 10 - d;
                pos++;
            }
            checkInteger(start, digits);
            if (pos < end && !delimiter(b[pos])) {
                throw BAIL; // a fraction, an exponent, or not a number
            }
            if (!negative && v == Long.MIN_VALUE) {
                throw BAIL;
            }
            long value = negative ? v : -v;
            if (value < min || value > max) {
                throw BAIL;
            }
            return value;
        }

        /** The integer part's digits {@code [digits, pos)} are JSON's: at least one, no leading zero. */
        private void checkInteger(int start, int digits) {
            int n = pos - digits;
            if (n == 0 || (n > 1 && b[digits] == '0') || pos - start >= limits.getMaxNumberLength()) {
                throw BAIL;
            }
        }

        /** Any number token, as the double jackson-core reads from it. */
        double decimal() {
            skipSpace();
            int start = pos;
            boolean negative = pos < end && b[pos] == '-';
            if (negative) {
                pos++;
            }
            // The non-finite numbers the wire codec accepts (a loss can be NaN); jackson-core's other spellings
            // (+Infinity, INF) are left to it.
            if (pos < end && b[pos] > '9') {
                if (skipWord(INFINITY)) {
                    return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
                }
                if (!negative && skipWord(NAN)) {
                    return Double.NaN;
                }
                throw BAIL;
            }
            int digits = pos;
            // Every digit of the integer part and the fraction; past 18 digits it wraps and is not used.
            long mantissa = digits(0, end);
            int count = pos - digits;
            checkInteger(start, digits);
            int scale = 0;
            boolean integral = true;
            if (pos < end && b[pos] == '.') {
                pos++;
                integral = false;
                int fraction = pos;
                mantissa = digits(mantissa, end);
                if (pos == fraction) {
                    throw BAIL;
                }
                scale = fraction - pos;
                count += pos - fraction;
            }
            boolean exact = count <= 18; // the mantissa holds every digit
            int exponent = 0;
            if (pos < end && (b[pos] == 'e' || b[pos] == 'E')) {
                pos++;
                integral = false;
                boolean minus = false;
                if (pos < end && (b[pos] == '+' || b[pos] == '-')) {
                    minus = b[pos] == '-';
                    pos++;
                }
                int from = pos;
                while (pos < end && b[pos] >= '0' && b[pos] <= '9') {
                    if (exponent < 10_000) {
                        exponent = exponent * 10 + (b[pos] - '0');
                    }
                    pos++;
                }
                if (pos == from) {
                    throw BAIL;
                }
                if (minus) {
                    exponent = -exponent;
                }
            }
            if (pos - start >= limits.getMaxNumberLength() || (pos < end && !delimiter(b[pos]))) {
                throw BAIL;
            }
            if (integral && exact) {
                // An integer token: jackson-core reads it as a long and converts that (so "-0" is 0.0, not -0.0).
                return (double) (negative ? -mantissa : mantissa);
            }
            int power = scale + exponent;
            // Clinger's fast path: a mantissa a double holds exactly, times or over a power of ten a double holds
            // exactly, is one correctly rounded operation: the double any correct parser gives.
            if (exact && mantissa < (1L << 53) && power >= -22 && power <= 22) {
                double v = power < 0 ? mantissa / POWERS[-power] : mantissa * POWERS[power];
                return negative ? -v : v;
            }
            return NumberInput.parseDouble(new String(b, start, pos - start, StandardCharsets.ISO_8859_1), true);
        }

        /** {@code m} followed by the digits from here up to {@code limit}, eight at a time; wraps when too many. */
        private long digits(long m, int limit) {
            while (pos + 8 <= limit) {
                long eight = eightDigits(b, pos);
                if (eight < 0) {
                    break;
                }
                m = m * 100_000_000 + eight;
                pos += 8;
            }
            while (pos < limit) {
                int d = b[pos] - '0';
                if (d < 0 || d > 9) {
                    break;
                }
                m = m * 10 + d;
                pos++;
            }
            return m;
        }

        /** The eight ASCII digits at {@code at} as a number, or -1 if one is not a digit (SWAR, as simdjson). */
        static long eightDigits(byte[] b, int at) {
            long chunk = (long) LONGS.get(b, at);
            long val = chunk - 0x3030303030303030L;
            if ((((chunk + 0x4646464646464646L) | val) & 0x8080808080808080L) != 0) {
                return -1;
            }
            val = val * 10 + (val >>> 8);
            return (((val & 0x000000FF000000FFL) * (100 + (100_0000L << 32)))
                    + (((val >>> 16) & 0x000000FF000000FFL) * (1 + (10000L << 32)))) >>> 32;
        }

        /** Skips any JSON value, checking its grammar as {@link #string}, {@link #decimal} and the rest do. */
        void skipValue() {
            int c = next();
            switch (c) {
                case '{' -> {
                    open();
                    if (next() != '}') {
                        back();
                        do {
                            skipSpace();
                            name();
                            expect(':');
                            skipValue();
                        } while (!endOf('}'));
                    }
                    close();
                }
                case '[' -> {
                    open();
                    if (next() != ']') {
                        back();
                        do {
                            skipValue();
                        } while (!endOf(']'));
                    }
                    close();
                }
                case '"' -> {
                    back();
                    string();
                }
                case 't', 'f', 'n' -> {
                    back();
                    if (!skipWord(TRUE) && !skipWord(FALSE) && !skipWord(NULL)) {
                        throw BAIL;
                    }
                }
                default -> {
                    if (c != '-' && c != 'N' && c != 'I' && (c < '0' || c > '9')) {
                        throw BAIL;
                    }
                    back();
                    decimal();
                }
            }
        }
    }
}
