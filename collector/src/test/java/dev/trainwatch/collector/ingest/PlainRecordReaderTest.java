package dev.trainwatch.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunFailure;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import dev.trainwatch.protocol.wire.WireCodec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The plain reader against databind, the reader it stands in for: a batch in the plain shape reads to an equal
 * record; any other body is left to databind (the reader answers null), and above all no body databind refuses is
 * accepted. Random batches with random fields left out, then random edits of their text (nulls, strings for
 * numbers, floats for integers, huge and non-finite numbers, duplicate, missing and unknown fields, truncation).
 */
class PlainRecordReaderTest {
    private final Random random = new Random(24);

    @Test
    void aPlainBatchReadsToTheRecordDatabindReads() throws Exception {
        PlainRecordReader<AgentBatch> plain = reader();
        for (int i = 0; i < 500; i++) {
            AgentBatch batch = randomBatch(false);
            // As databind writes it, and as the agent does (the codec generated from the records, WireCodec).
            for (byte[] json : List.of(Json.MAPPER.writeValueAsBytes(batch), WireCodec.toBytes(batch))) {
                AgentBatch read = plain.read(json, json.length);
                assertThat(read).as(new String(json, StandardCharsets.UTF_8)).isNotNull()
                        .isEqualTo(BodyDecoder.batchByDatabind(json)).isEqualTo(batch);
            }
        }
    }

    /**
     * The reader first compares each field with the name the record's order expects next; a writer with another
     * order, spacing or escapes in names must read the same.
     */
    @Test
    void fieldsInAnyOrderWithSpacesOrEscapedNamesReadAsDatabindReadsThem() throws Exception {
        PlainRecordReader<AgentBatch> plain = reader();
        for (int i = 0; i < 300; i++) {
            com.fasterxml.jackson.databind.JsonNode tree = Json.MAPPER.valueToTree(randomBatch(false));
            shuffle(tree);
            String text = i % 3 == 0 ? tree.toPrettyString() : tree.toString();
            if (i % 5 == 0) {
                text = text.replace("\"seq\"", "\"s\\u0065q\"").replace("\"ts\"", "\"\\u0074s\"");
            }
            byte[] json = text.getBytes(StandardCharsets.UTF_8);
            AgentBatch read = plain.read(json, json.length);
            assertThat(read).as(text).isNotNull().isEqualTo(BodyDecoder.batchByDatabind(json));
        }
    }

    /** Step reports, one object or an array, read as databind reads them, and what databind refuses is refused. */
    @Test
    void stepReportsReadAsDatabindReadsThemOrAreLeftToIt() throws Exception {
        BodyDecoder decoder = new BodyDecoder(1 << 20);
        for (int i = 0; i < 500; i++) {
            List<StepEvent> steps = new ArrayList<>();
            for (int k = random.nextInt(5); k > 0; k--) {
                steps.add(randomStep());
            }
            Object value = i % 4 == 0 && !steps.isEmpty() ? steps.get(0) : steps;
            for (byte[] json : List.of(Json.MAPPER.writeValueAsBytes(value),
                    WireCodec.toBytes(value))) {
                List<StepEvent> expected = value instanceof StepEvent one ? List.of(one) : steps;
                assertThat(decoder.steps(json)).as(new String(json, StandardCharsets.UTF_8))
                        .isEqualTo(BodyDecoder.stepsByDatabind(json, json.length)).isEqualTo(expected);
                if (value instanceof List) {
                    assertThat(BodyDecoder.PLAIN_STEP.readList(json, json.length)).isEqualTo(expected);
                }
            }
        }
        String[] replacements = {"null", "\"1.5\"", "1.5", "-1", "1e400", "NaN", "true", "{}", "[]",
            "99999999999999999999", "2147483648", "[null]", "-0.0", "7"};
        int accepted = 0;
        for (int i = 0; i < 2_000; i++) {
            List<StepEvent> steps = List.of(randomStep(), randomStep());
            String edited = edit(Json.MAPPER.writeValueAsString(random.nextBoolean() ? steps : steps.get(0)),
                    replacements);
            byte[] json = edited.getBytes(StandardCharsets.UTF_8);
            List<StepEvent> databind;
            try {
                databind = BodyDecoder.stepsByDatabind(json, json.length);
            } catch (ApiError refused) {
                databind = null;
            }
            List<StepEvent> plain = edited.stripLeading().startsWith("[")
                    ? BodyDecoder.PLAIN_STEP.readList(json, json.length)
                    : nullOrList(BodyDecoder.PLAIN_STEP.read(json, json.length));
            if (databind == null) {
                assertThat(plain).as("databind refuses %s", edited).isNull();
            } else if (plain != null) {
                assertThat(plain).as(edited).isEqualTo(databind);
                accepted++;
            }
        }
        assertThat(accepted).isGreaterThan(200);
    }

    private static List<StepEvent> nullOrList(StepEvent one) {
        return one == null ? null : List.of(one);
    }

    private StepEvent randomStep() {
        return new StepEvent(maybe(l()), maybe(d()), maybe(d()), maybe(d()), maybe(d()), maybe(d()),
                maybe(random.nextInt(100)), maybe(d()), maybe(d()), maybe(d()), maybe(d()), maybe(random.nextInt(2048)),
                maybe(random.nextInt(2048)), maybe(random.nextInt(64)), maybe(1.7e9 + d()), maybe("log"));
    }

    /** Every object's fields in a random order, at every depth. */
    private void shuffle(com.fasterxml.jackson.databind.JsonNode node) {
        if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
            List<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> fields = new ArrayList<>();
            object.fields().forEachRemaining(fields::add);
            java.util.Collections.shuffle(fields, random);
            object.removeAll();
            for (Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> f : fields) {
                shuffle(f.getValue());
                object.set(f.getKey(), f.getValue());
            }
        } else if (node != null && node.isArray()) {
            node.forEach(this::shuffle);
        }
    }

    @Test
    void integersForDecimalsNonFiniteDecimalsAndUnknownFieldsReadAsDatabindReadsThem() {
        PlainRecordReader<AgentBatch> plain = reader();
        String[] bodies = {
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":1700000000}",
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":NaN,\"gpus\":[]}",
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":-Infinity,\"runs\":[]}",
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":1e400}",
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":-0.0}",
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":123456789012345678901234567890}",
            "{\"host\":\"h\",\"newer\":{\"x\":[1,{\"y\":null}]},\"agent_id\":\"a\",\"seq\":9007199254740991}",
            "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"gpus\":[{\"ts\":1.5,\"index\":2,\"uuid\":\"GPU-1\","
                    + "\"utilization_ratio\":1,\"sm_clock_hz\":1980000000,\"clock_event_reasons\":[\"sw_power_cap\"],"
                    + "\"lost\":false,\"processes\":[{\"pid\":7}],\"extra\":\"x\"}]}",
        };
        for (String body : bodies) {
            byte[] json = body.getBytes(StandardCharsets.UTF_8);
            assertThat(plain.read(json, json.length)).as(body).isNotNull().isEqualTo(BodyDecoder.batchByDatabind(json));
        }
    }

    @Test
    void whatIsNotPlainIsLeftToDatabind() {
        PlainRecordReader<AgentBatch> plain = reader();
        String head = "{\"host\":\"h\",\"agent_id\":\"a\",";
        String[] bodies = {
            head + "\"seq\":\"1\"}", // a string for a number
            head + "\"seq\":1.0}", // a float for an integer
            head + "\"seq\":NaN}",
            head + "\"seq\":1,\"sent_at\":null}",
            head + "\"seq\":1,\"seq\":2}", // duplicate
            head + "\"seq\":1,\"gpus\":[null]}",
            head + "\"seq\":1,\"gpus\":[{\"index\":0,\"uuid\":\"GPU-1\"}]}", // no ts
            head + "\"seq\":1,\"gpus\":[{\"ts\":1,\"index\":3000000000,\"uuid\":\"GPU-1\"}]}",
            head + "\"seq\":99999999999999999999}",
            head + "\"seq\":1} {}", // trailing tokens
            head + "\"seq\":1",
            "[" + head + "\"seq\":1}]",
            "null",
            "",
            head + "\"seq\":1,\"events\":[{\"ts\":1,\"kind\":\"run_failed\",\"run_id\":\"r\","
                    + "\"failure\":{\"cause\":\"signal\",\"detail\":{\"k\":1}}}]}",
        };
        for (String body : bodies) {
            byte[] json = body.getBytes(StandardCharsets.UTF_8);
            assertThat(plain.read(json, json.length)).as(body).isNull();
        }
    }

    /**
     * Random edits of plain batches: whatever the plain reader accepts databind reads to the same record, and nothing
     * databind refuses is accepted.
     */
    @Test
    void editedBatchesAreReadAsDatabindReadsThemOrLeftToIt() throws Exception {
        PlainRecordReader<AgentBatch> plain = reader();
        String[] replacements = {"null", "\"1.5\"", "1.5", "-1", "0", "1e400", "NaN", "-Infinity", "true", "{}", "[]",
            "99999999999999999999", "2147483648", "\"x\"", "[null]", "{\"a\":[1,2,{\"b\":null}]}", "-0.0", "7",
            "-0", "Infinity", "+Infinity", "1E5", "1.5e-3", "0.30000000000000004", "9007199254740993", "-NaN", "01",
            "1.", ".5", "\"\\u00e9t\\u00e9\"", "\"\u00e9t\u00e9\"", "\"a\\nb\\\"c\"", "\"\\x\"", "tru", "nul"};
        Map<Outcome, Integer> outcomes = new java.util.EnumMap<>(Outcome.class);
        for (int i = 0; i < 2_000; i++) {
            String text = Json.MAPPER.writeValueAsString(randomBatch(true));
            String edited = edit(text, replacements);
            byte[] json = edited.getBytes(StandardCharsets.UTF_8);
            outcomes.merge(readAsDatabindOrLeft(plain, json), 1, Integer::sum);
        }
        assertThat(outcomes.getOrDefault(Outcome.READ, 0)).isGreaterThan(200);
        assertThat(outcomes.getOrDefault(Outcome.REFUSED_BY_BOTH, 0)).isGreaterThan(200);
    }

    /**
     * Random bytes changed, dropped or added anywhere in plain batches (the reader works on the bytes themselves, so
     * the grammar is what is tested here): whatever it accepts databind reads to the same record, and nothing databind
     * refuses is accepted.
     */
    @Test
    void batchesWithRandomBytesChangedAreReadAsDatabindReadsThemOrLeftToIt() {
        PlainRecordReader<AgentBatch> plain = reader();
        byte[] alphabet = "{}[],:\"\\ \t\n0123456789.eE-+NIaflnrstux/".getBytes(StandardCharsets.UTF_8);
        Map<Outcome, Integer> outcomes = new java.util.EnumMap<>(Outcome.class);
        for (int i = 0; i < 20_000; i++) {
            byte[] json = WireCodec.toBytes(randomBatch(true));
            for (int e = 1 + random.nextInt(2); e > 0 && json.length > 0; e--) {
                int at = random.nextInt(json.length);
                byte with = random.nextInt(20) == 0 ? (byte) (0x80 + random.nextInt(128))
                        : alphabet[random.nextInt(alphabet.length)];
                json = switch (random.nextInt(3)) {
                    case 0 -> { // change
                        byte[] out = json.clone();
                        out[at] = with;
                        yield out;
                    }
                    case 1 -> { // drop
                        byte[] out = new byte[json.length - 1];
                        System.arraycopy(json, 0, out, 0, at);
                        System.arraycopy(json, at + 1, out, at, json.length - at - 1);
                        yield out;
                    }
                    default -> { // add
                        byte[] out = new byte[json.length + 1];
                        System.arraycopy(json, 0, out, 0, at);
                        out[at] = with;
                        System.arraycopy(json, at, out, at + 1, json.length - at);
                        yield out;
                    }
                };
            }
            outcomes.merge(readAsDatabindOrLeft(plain, json), 1, Integer::sum);
        }
        assertThat(outcomes.getOrDefault(Outcome.READ, 0)).isGreaterThan(2_000);
        assertThat(outcomes.getOrDefault(Outcome.REFUSED_BY_BOTH, 0)).isGreaterThan(2_000);
    }

    /** Eight bytes read as digits at once agree with a byte at a time, whatever byte stands anywhere among them. */
    @Test
    void eightDigitsAtOnceAgreeWithOneAtATime() {
        for (int i = 0; i < 200_000; i++) {
            byte[] b = new byte[10];
            for (int k = 0; k < b.length; k++) {
                b[k] = (byte) ('0' + random.nextInt(10));
            }
            if (i % 2 == 0) {
                b[1 + random.nextInt(8)] = (byte) random.nextInt(256); // any byte, a digit or not
            }
            long expected = 0;
            for (int k = 1; k < 9 && expected >= 0; k++) {
                expected = b[k] >= '0' && b[k] <= '9' ? expected * 10 + (b[k] - '0') : -1;
            }
            assertThat(PlainRecordReader.Cursor.eightDigits(b, 1)).as(java.util.Arrays.toString(b)).isEqualTo(expected);
        }
    }

    /** Strings with escapes and multi-byte characters, short and long, read as databind reads them. */
    @Test
    void stringsWithEscapesAndMultiByteCharactersReadAsDatabindReadsThem() {
        PlainRecordReader<AgentBatch> plain = reader();
        String[] hosts = {"n\u00f6de-\\u00e9", "\\\"q\\\" \\/ \\b\\f\\n\\r\\t", "GPU \u00b7 \u6f22\u5b57 \ud83d\ude80",
            "\\ud83d\\ude80 and a lone \\ud800", "a\\nb".repeat(20_000), "\u00e9\\n".repeat(20_000)};
        for (String host : hosts) {
            byte[] json = ("{\"host\":\"" + host + "\",\"agent_id\":\"a\",\"seq\":1}").getBytes(StandardCharsets.UTF_8);
            AgentBatch read = plain.read(json, json.length);
            assertThat(read).as(host.length() > 80 ? host.substring(0, 80) : host).isNotNull()
                    .isEqualTo(BodyDecoder.batchByDatabind(json));
        }
    }

    /** Numbers in every form JSON allows, and some it does not, read as jackson-core reads them or left to it. */
    @Test
    void numbersReadAsJacksonReadsThem() {
        PlainRecordReader<AgentBatch> plain = reader();
        List<String> numbers = new ArrayList<>(List.of("0", "-0", "0.0", "-0.0", "1e0", "1E+2", "1e-2", "123.456e-7",
            "0.1", "0.30000000000000004", "0.9099999999999999", "1.7E9", "9007199254740993", "9007199254740993.0",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "4.9e-324", "2.4703282292062327e-324", "1.7976931348623157e308", "1e309", "1e-400", "1e22", "1e23",
            "123456789012345678901234567890", "0.000000000000000000000000000001", "NaN", "Infinity", "-Infinity",
            "1.", ".1", "01", "-", "1e", "1e+", "+1", "0x10", "1_000"));
        for (int i = 0; i < 2_000; i++) {
            double v = switch (i % 4) {
                case 0 -> random.nextDouble();
                case 1 -> random.nextDouble() * Math.pow(10, random.nextInt(40) - 20);
                case 2 -> Double.longBitsToDouble(random.nextLong());
                default -> random.nextInt(1_000_000) / 1000.0;
            };
            numbers.add(Double.toString(v));
            numbers.add(new java.math.BigDecimal(v).toPlainString());
        }
        int read = 0;
        for (String number : numbers) {
            for (String body : List.of("{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"sent_at\":" + number + "}",
                    "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":" + number + "}")) {
                byte[] json = body.getBytes(StandardCharsets.UTF_8);
                if (readAsDatabindOrLeft(plain, json) == Outcome.READ) {
                    read++;
                }
            }
        }
        assertThat(read).isGreaterThan(3_000);
    }

    private enum Outcome { READ, LEFT_TO_DATABIND, REFUSED_BY_BOTH }

    /**
     * Reads {@code json} with both readers and holds the plain one to databind: a body databind refuses is left to it
     * (null), and a body the plain reader reads is read to the record databind reads.
     */
    private static Outcome readAsDatabindOrLeft(PlainRecordReader<AgentBatch> plain, byte[] json) {
        AgentBatch databind;
        try {
            databind = BodyDecoder.batchByDatabind(json);
        } catch (ApiError refused) {
            databind = null;
        }
        AgentBatch read = plain.read(json, json.length);
        String text = new String(json, StandardCharsets.UTF_8);
        if (databind == null) {
            assertThat(read).as("databind refuses %s", text).isNull();
            return Outcome.REFUSED_BY_BOTH;
        }
        if (read == null) {
            return Outcome.LEFT_TO_DATABIND;
        }
        assertThat(read).as(text).isEqualTo(databind);
        return Outcome.READ;
    }

    private String edit(String text, String[] replacements) {
        int edits = 1 + random.nextInt(3);
        for (int e = 0; e < edits; e++) {
            int colon = nth(text, ':');
            int comma = nth(text, ',');
            switch (random.nextInt(6)) {
                case 0, 1 -> { // replace the value after a field name (up to the next , } or ])
                    if (colon < 0) {
                        break;
                    }
                    int end = colon + 1;
                    int depth = 0;
                    while (end < text.length()) {
                        char c = text.charAt(end);
                        if ((c == ',' || c == '}' || c == ']') && depth == 0) {
                            break;
                        }
                        depth += c == '{' || c == '[' ? 1 : c == '}' || c == ']' ? -1 : 0;
                        end++;
                    }
                    text = text.substring(0, colon + 1) + replacements[random.nextInt(replacements.length)]
                            + text.substring(end);
                }
                case 2 -> { // duplicate a field name's value with an unknown or known name
                    if (comma >= 0) {
                        String name = random.nextBoolean() ? "\"zz_unknown\"" : "\"seq\"";
                        text = text.substring(0, comma + 1) + name + ":" + replacements[random.nextInt(
                                replacements.length)] + "," + text.substring(comma + 1);
                    }
                }
                case 3 -> { // drop a field (from a comma to the next comma at the same depth, roughly)
                    int next = comma < 0 ? -1 : text.indexOf(',', comma + 1);
                    if (next > 0 && text.substring(comma, next).indexOf('{') < 0
                            && text.substring(comma, next).indexOf('[') < 0) {
                        text = text.substring(0, comma) + text.substring(next);
                    }
                }
                case 4 -> text = text.substring(0, random.nextInt(text.length() + 1)); // truncate
                default -> { // a number somewhere gets a fraction or a sign
                    int digit = -1;
                    for (int tries = 0; tries < 20 && digit < 0; tries++) {
                        int at = random.nextInt(text.length());
                        if (Character.isDigit(text.charAt(at))) {
                            digit = at;
                        }
                    }
                    if (digit >= 0) {
                        text = text.substring(0, digit + 1) + (random.nextBoolean() ? ".5" : "0000000000")
                                + text.substring(digit + 1);
                    }
                }
            }
        }
        return text;
    }

    private int nth(String text, char c) {
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == c) {
                at.add(i);
            }
        }
        return at.isEmpty() ? -1 : at.get(random.nextInt(at.size()));
    }

    /** The reader BodyDecoder uses (over its mapper's factory: the wire codec's, strict integers, fast decimals). */
    private static PlainRecordReader<AgentBatch> reader() {
        return BodyDecoder.PLAIN_BATCH;
    }

    // ---- random batches: every field present or left out at random

    private <T> T maybe(T value) {
        return random.nextInt(4) == 0 ? null : value;
    }

    private double d() {
        return switch (random.nextInt(5)) {
            case 0 -> random.nextInt(100);
            case 1 -> random.nextDouble();
            case 2 -> 1e9 * random.nextDouble();
            default -> Math.round(random.nextDouble() * 1000) / 1000.0;
        };
    }

    private long l() {
        return random.nextBoolean() ? random.nextInt(1000) : Math.abs(random.nextLong() >> random.nextInt(30));
    }

    private List<String> strings(String prefix) {
        List<String> out = new ArrayList<>();
        for (int i = random.nextInt(4); i > 0; i--) {
            out.add(prefix + random.nextInt(100));
        }
        return out;
    }

    private AgentBatch randomBatch(boolean withEvents) {
        List<GpuSample> gpus = new ArrayList<>();
        for (int g = random.nextInt(9); g > 0; g--) {
            List<GpuProcess> processes = new ArrayList<>();
            for (int p = random.nextInt(3); p > 0; p--) {
                processes.add(new GpuProcess(l(), maybe(l()), maybe(d()), maybe(d())));
            }
            gpus.add(new GpuSample(1.7e9 + d(), random.nextInt(8), "GPU-" + random.nextInt(1000),
                    maybe("NVIDIA H100"), maybe("00000000:07:00.0"), maybe(l()), maybe(l()), maybe(l()), maybe(l()),
                    maybe(d()), maybe(d()), maybe(new UtilizationWindow(random.nextInt(10), d(), d(), d(), d(),
                    1.7e9 + d(), 1.7e9 + d())), maybe(l()), maybe(l()), maybe(l()), maybe(l()),
                    maybe(strings("reason_")), maybe(d()), maybe(d()), maybe(d()), maybe(d()),
                    maybe(random.nextInt(16)), maybe(processes), maybe(random.nextBoolean()),
                    maybe(new GpuActivity(maybe(d()), maybe(d()), maybe(d()), maybe(d()), maybe(d()), maybe(d()),
                            maybe(d()), maybe(d()), maybe(d()), maybe(d()), maybe(l()), maybe(l())))));
        }
        List<RunAttribution> runs = new ArrayList<>();
        for (int r = random.nextInt(3); r > 0; r--) {
            List<RankInfo> ranks = new ArrayList<>();
            for (int k = random.nextInt(4); k > 0; k--) {
                ranks.add(new RankInfo(l(), maybe(random.nextInt(64)), maybe(random.nextInt(8)),
                        maybe(random.nextInt(64) + 1), maybe(strings("GPU-")), maybe("R"), maybe(d()), maybe(l()),
                        maybe(random.nextInt(9)), maybe(l()), maybe(d())));
            }
            List<Long> pids = new ArrayList<>();
            for (int p = random.nextInt(4); p > 0; p--) {
                pids.add(l());
            }
            runs.add(new RunAttribution("run-" + random.nextInt(10), maybe(pids), maybe(strings("GPU-")),
                    maybe(ranks), maybe("10.0.0.1"), maybe(random.nextBoolean()), maybe(strings("alias-")),
                    maybe("ns"), maybe("pod"), maybe("c"), maybe("job")));
        }
        List<AgentEvent> events = new ArrayList<>();
        if (withEvents && random.nextInt(4) == 0) {
            events.add(random.nextBoolean()
                    ? new AgentEvent(1.7e9, "xid", "GPU-1", 79L, null, "xid 79", null, null, null, null)
                    : new AgentEvent(1.7e9, "run_failed", null, null, "run-1", null,
                            new RunFailure("signal", "killed", null, 9, null, Map.of("k", 1), List.of("line")), null, null, null));
        }
        AgentHealth health = maybe(new AgentHealth(maybe(d()), maybe(l()), maybe(l()), maybe(l()), maybe(l()),
                maybe(d()), maybe(random.nextBoolean()), maybe(random.nextBoolean()), maybe(l()), maybe(l()),
                maybe(random.nextBoolean()), maybe("boom")));
        HostMemory memory = maybe(new HostMemory(1.7e9 + d(), maybe(l()), maybe(l()), maybe(l()), maybe(l()),
                maybe(l())));
        List<dev.trainwatch.protocol.RunSteps> runSteps = new ArrayList<>();
        for (int r = random.nextInt(3); r > 0; r--) {
            List<dev.trainwatch.protocol.StepEvent> steps = new ArrayList<>();
            for (int k = random.nextInt(4); k > 0; k--) {
                steps.add(new dev.trainwatch.protocol.StepEvent(maybe(l()), maybe(d()), maybe(d()), maybe(d()),
                        maybe(d()), maybe(d()), maybe(random.nextInt(100)), maybe(d()), maybe(d()), maybe(d()),
                        maybe(d()), maybe(random.nextInt(256)), maybe(random.nextInt(256)), maybe(random.nextInt(64)),
                        maybe(1.7e9 + d()), maybe("3f9c2a:" + random.nextInt(4))));
            }
            runSteps.add(new dev.trainwatch.protocol.RunSteps("run-" + random.nextInt(10), steps));
        }
        return new AgentBatch("node-" + random.nextInt(100), "agent-" + random.nextInt(100), l(), maybe(gpus),
                maybe(runs), maybe(events), health, memory, maybe(1.7e9 + d()), maybe(runSteps));
    }
}
