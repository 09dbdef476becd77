package dev.trainwatch.collector.ingest;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.GZIPInputStream;

/**
 * Turns a request body into protocol records: inflates gzip up to a cap (a "gzip bomb" is a 413, not an
 * out-of-memory), and parses with the wire codec, turning Jackson's failures into one line that says
 * where the body went wrong. Plain Java; immutable and thread-safe.
 */
public final class BodyDecoder {
    private static final int MAX_DETAIL = 160;

    /** The wire codec, refusing a non-finite number for an integer, with Jackson's FastDoubleParser. */
    private static final ObjectMapper MAPPER = Json.newMapper().registerModule(StrictIntegers.module());

    static {
        MAPPER.getFactory().enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER.mappedFeature());
    }
    private static final ObjectReader BATCH = MAPPER.readerFor(AgentBatch.class);
    private static final StreamReadConstraints LIMITS = MAPPER.getFactory().streamReadConstraints();
    /** A batch in the plain shape agents send, read without databind; anything else by {@link #BATCH}. */
    static final PlainRecordReader<AgentBatch> PLAIN_BATCH = new PlainRecordReader<>(LIMITS, AgentBatch.class);
    /** Specs are typed by people: a misspelled field ("bacth") is refused, not ignored (agents' batches may grow). */
    private static final ObjectReader SPEC = MAPPER.readerFor(RunSpec.class)
            .with(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final ObjectReader STEP = MAPPER.readerFor(StepEvent.class);
    private static final ObjectReader STEPS = MAPPER.readerFor(StepEvent[].class);
    /** Step reports in the plain shape, read without databind; anything else by {@link #STEP} or {@link #STEPS}. */
    static final PlainRecordReader<StepEvent> PLAIN_STEP = new PlainRecordReader<>(LIMITS, StepEvent.class);

    private final long maxInflatedBytes;

    /** @param maxInflatedBytes largest body accepted after gzip decompression */
    public BodyDecoder(long maxInflatedBytes) {
        this.maxInflatedBytes = maxInflatedBytes;
    }

    /** The body after {@code Content-Encoding}: 415 for other than gzip or identity, 400 broken, 413 too large. */
    public byte[] decode(byte[] body, String contentEncoding) {
        Bytes bytes = decodeInPlace(body, contentEncoding);
        return bytes.array() == body && bytes.length() == body.length ? body
                : Arrays.copyOf(bytes.array(), bytes.length());
    }

    /** A decoded body: {@code array[0, length)} (a gzip body's array is its own, sized by doubling). */
    record Bytes(byte[] array, int length) {
    }

    /** As {@link #decode}, without copying an inflated body to its exact size. */
    Bytes decodeInPlace(byte[] body, String contentEncoding) {
        if (contentEncoding == null || contentEncoding.isBlank()
                || contentEncoding.strip().equalsIgnoreCase("identity")) {
            return new Bytes(body, body.length);
        }
        String encoding = contentEncoding.strip().toLowerCase(Locale.ROOT);
        if (!encoding.equals("gzip") && !encoding.equals("x-gzip")) {
            throw new ApiError(ApiError.UNSUPPORTED_MEDIA_TYPE,
                    "Content-Encoding must be gzip or identity, got '" + printable(encoding, 40) + "'");
        }
        return gunzip(body, maxInflatedBytes);
    }

    /** The body's gzip members inflated by the JDK, stopping one byte past the cap (a gzip bomb is a 413). */
    static Bytes gunzip(byte[] body, long maxInflatedBytes) {
        int cap = (int) Math.min(maxInflatedBytes + 1, Integer.MAX_VALUE - 16);
        // JSON inflates about twenty-fold: room for that (at most 1 MiB up front), doubled when more is needed.
        byte[] out = new byte[(int) Math.min(cap, Math.max(64L * 1024, Math.min(body.length * 32L, 1L << 20)))];
        int total = 0;
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body), 8192)) {
            for (;;) {
                if (total == out.length) {
                    if (total >= cap) {
                        throw ApiError.tooLarge("gzip body inflates beyond " + maxInflatedBytes + " bytes");
                    }
                    out = Arrays.copyOf(out, (int) Math.min(cap, out.length * 2L));
                }
                int n = in.read(out, total, out.length - total);
                if (n < 0) {
                    return new Bytes(out, total);
                }
                total += n;
            }
        } catch (IOException e) {
            // The JDK's end-of-input inside a header carries no message.
            String what = e.getMessage() == null ? "unexpected end of the gzip stream" : e.getMessage();
            throw ApiError.badRequest("bad gzip body: " + printable(what, MAX_DETAIL));
        }
    }

    /** Parses an agent batch ({@code POST /v1/samples}) straight from the body as sent. */
    public AgentBatch batch(byte[] body, String contentEncoding) {
        Bytes json = decodeInPlace(body, contentEncoding);
        return batch(json.array(), json.length());
    }

    /** Parses step events ({@code POST /v1/runs/{run_id}/steps}) straight from the body as sent. */
    public List<StepEvent> steps(byte[] body, String contentEncoding) {
        Bytes json = decodeInPlace(body, contentEncoding);
        return steps(json.array(), json.length());
    }

    /** Parses an agent batch ({@code POST /v1/samples}). */
    public AgentBatch batch(byte[] json) {
        return batch(json, json.length);
    }

    /** As {@link #batch(byte[])} by databind alone, never the plain reader (for tests that compare the two). */
    static AgentBatch batchByDatabind(byte[] json) {
        return read(BATCH, json, json.length, "an agent batch object");
    }

    private static AgentBatch batch(byte[] json, int length) {
        AgentBatch plain = PLAIN_BATCH.read(json, length);
        return plain != null ? plain : read(BATCH, json, length, "an agent batch object");
    }

    /** Parses a run spec ({@code PUT /v1/runs/{run_id}}). */
    public RunSpec spec(byte[] json) {
        try {
            return read(SPEC, json, json.length, "a run spec object");
        } catch (UnknownFields unknown) {
            throw ApiError.unprocessable(unknownFieldsMessage(json, unknown.known));
        }
    }

    /** Every top-level field of the body the spec does not know, named, with the fields it does. */
    private static String unknownFieldsMessage(byte[] json, Collection<Object> known) {
        Set<String> knownNames = new TreeSet<>();
        known.forEach(k -> knownNames.add(String.valueOf(k)));
        List<String> unknown = new ArrayList<>();
        try {
            Json.MAPPER.readTree(json).fieldNames().forEachRemaining(name -> {
                if (!knownNames.contains(name)) {
                    unknown.add("'" + printable(name, 64) + "'");
                }
            });
        } catch (IOException e) {
            // parsed once already: the message goes without the list
        }
        return (unknown.size() == 1 ? "unknown field " : "unknown fields ") + String.join(", ", unknown)
                + " in the run spec; known fields: " + String.join(", ", knownNames);
    }

    /** Internal: a body with a field its type does not know (only readers that refuse them throw it). */
    private static final class UnknownFields extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient Collection<Object> known;

        UnknownFields(Collection<Object> known) {
            super(null, null, false, false);
            this.known = known;
        }
    }

    /** Parses one step event or an array of them ({@code POST /v1/runs/{run_id}/steps}). */
    public List<StepEvent> steps(byte[] json) {
        return steps(json, json.length);
    }

    private List<StepEvent> steps(byte[] json, int length) {
        List<StepEvent> plain;
        if (isArray(json, length)) {
            plain = PLAIN_STEP.readList(json, length);
        } else {
            StepEvent one = PLAIN_STEP.read(json, length);
            plain = one == null ? null : List.of(one);
        }
        return plain != null ? plain : stepsByDatabind(json, length);
    }

    /** As {@link #steps(byte[])} by databind alone (for what the plain reader leaves, and tests). */
    static List<StepEvent> stepsByDatabind(byte[] json, int length) {
        if (isArray(json, length)) {
            StepEvent[] events = read(STEPS, json, length, "an array of step events");
            for (int i = 0; i < events.length; i++) {
                if (events[i] == null) {
                    throw ApiError.badRequest("[" + i + "] is null: expected a step event object");
                }
            }
            return Arrays.asList(events);
        }
        StepEvent one = read(STEP, json, length, "a step event object or an array of them");
        return List.of(one);
    }

    private static boolean isArray(byte[] json, int length) {
        int first = firstNonWhitespace(json, length);
        return first >= 0 && json[first] == '[';
    }

    private static int firstNonWhitespace(byte[] json, int length) {
        for (int i = 0; i < length; i++) {
            byte b = json[i];
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return i;
            }
        }
        return -1;
    }

    private static <T> T read(ObjectReader reader, byte[] json, int length, String expected) {
        if (firstNonWhitespace(json, length) < 0) {
            throw ApiError.badRequest("empty body: expected " + expected);
        }
        T value;
        try {
            value = reader.readValue(json, 0, length);
        } catch (UnrecognizedPropertyException e) {
            throw new UnknownFields(e.getKnownPropertyIds());
        } catch (IOException e) {
            throw describe(e, expected);
        } catch (RuntimeException e) {
            // Jackson reports a few malformed inputs with unchecked exceptions; they are still the client's fault.
            throw ApiError.badRequest("malformed JSON: " + printable(String.valueOf(e.getMessage()), MAX_DETAIL));
        }
        if (value == null) {
            throw ApiError.badRequest("body is null: expected " + expected);
        }
        return value;
    }

    /** One line naming where the body went wrong and how. */
    static ApiError describe(IOException e, String expected) {
        if (e instanceof InputCoercionException coercion) {
            return ApiError.unprocessable("number out of range" + at(coercion.getLocation()) + ": "
                    + detail(coercion.getOriginalMessage()));
        }
        if (e instanceof StreamConstraintsException constraints) {
            return ApiError.badRequest("body refused" + at(constraints.getLocation()) + ": "
                    + detail(constraints.getOriginalMessage()));
        }
        if (e instanceof MismatchedInputException mismatch) {
            String path = path(mismatch);
            Class<?> target = mismatch.getTargetType();
            String want = target == null ? expected : describeType(target);
            if (path.isEmpty()) {
                return ApiError.badRequest("wrong JSON type" + at(mismatch.getLocation()) + ": expected " + want);
            }
            return ApiError.badRequest("wrong type for " + path + at(mismatch.getLocation()) + ": expected " + want);
        }
        if (e instanceof JsonMappingException mapping) {
            String path = path(mapping);
            return ApiError.badRequest("cannot read " + (path.isEmpty() ? "body" : path) + at(mapping.getLocation())
                    + ": " + detail(mapping.getOriginalMessage()));
        }
        if (e instanceof JsonProcessingException processing) {
            return ApiError.badRequest("malformed JSON" + at(processing.getLocation()) + ": "
                    + detail(processing.getOriginalMessage()));
        }
        return ApiError.badRequest("unreadable body: " + detail(e.getMessage()));
    }

    /** {@code gpus[3].memory_used_bytes}, from the JSON names Jackson recorded on its way down. */
    static String path(JsonMappingException e) {
        StringBuilder out = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (out.length() > 0) {
                    out.append('.');
                }
                out.append(printable(ref.getFieldName(), 64));
            } else if (ref.getIndex() >= 0) {
                out.append('[').append(ref.getIndex()).append(']');
            }
        }
        return out.toString();
    }

    private static String describeType(Class<?> type) {
        if (type == Long.class || type == long.class || type == Integer.class || type == int.class) {
            return "an integer";
        }
        if (type == Double.class || type == double.class || type == Float.class || type == float.class) {
            return "a number";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type.isArray() || Collection.class.isAssignableFrom(type)) {
            return "an array";
        }
        if (Map.class.isAssignableFrom(type) || type.isRecord()) {
            return "an object";
        }
        return "a " + type.getSimpleName();
    }

    private static String at(JsonLocation location) {
        if (location == null || location.getLineNr() < 0) {
            return "";
        }
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    private static String detail(String message) {
        return printable(message == null ? "unknown problem" : message, MAX_DETAIL);
    }

    /** First line, printable ASCII only, at most {@code max} characters: safe to echo back in an error. */
    public static String printable(String text, int max) {
        StringBuilder out = new StringBuilder(Math.min(text.length(), max));
        for (int i = 0; i < text.length() && out.length() < max; i++) {
            char c = text.charAt(i);
            if (c == '\n' || c == '\r') {
                break;
            }
            out.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        if (out.length() >= max && text.length() > max) {
            out.append('…');
        }
        return out.toString();
    }
}
