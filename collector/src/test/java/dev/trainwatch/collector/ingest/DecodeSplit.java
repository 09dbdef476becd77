package dev.trainwatch.collector.ingest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.trainwatch.collector.bench.HttpFleetLoad;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.wire.WireCodec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Where decoding a batch goes (docs/PERFORMANCE.md, "Collector: in-process costs"): one node's 5
 * polls of 8 GPUs with the agent's full reading set ({@link HttpFleetLoad#samples}), as the agent writes them, read
 * by the collector's plain reader into the records (from the bytes themselves since the eighth pass), and, for
 * comparison, by jackson-core: its tokens with every number and string converted, and its tokens alone (with long
 * and with short field names). Not a test; run with JMH:
 *
 * <pre>./mvnw -B -o -q -pl collector exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-cp %classpath org.openjdk.jmh.Main DecodeSplit -wi 5 -w 2 -i 10 -r 2 -f 2 -prof gc"</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Thread)
public class DecodeSplit {
    private static final int GPUS = 8;
    private static final int POLLS = 5;

    private byte[] json;
    /** The same JSON with every field name replaced by a two- or three-character one (no reader takes it). */
    private byte[] shortNames;
    private final JsonFactory factory = Json.MAPPER.getFactory();

    @Setup
    public void setUp() {
        List<String> uuids = new ArrayList<>();
        for (int g = 0; g < GPUS; g++) {
            uuids.add(String.format("GPU-%08x-0000-4000-8000-%012x", 7, g));
        }
        double now = System.currentTimeMillis() / 1000.0;
        List<GpuSample> readings = new ArrayList<>();
        for (int k = POLLS - 1; k >= 0; k--) {
            readings.addAll(HttpFleetLoad.samples(uuids, now - k, 1000 - k, 85_899_345_920L));
        }
        json = WireCodec.toBytes(new AgentBatch("node-0007", "agent-node-0007", 12, readings, List.of(), List.of(),
                null, null, now, null));
        shortNames = shortNames(json);
        gzipped = gzip(json);
        decoded = BodyDecoder.PLAIN_BATCH.read(json, json.length);
        if (BodyDecoder.PLAIN_BATCH.read(json, json.length) == null) {
            throw new IllegalStateException("the batch is not in the plain shape");
        }
    }

    /** As the agent's {@code Payload.gzipJson}: a raw deflate stream at {@link java.util.zip.Deflater#BEST_SPEED} in a gzip member. */
    static byte[] gzip(byte[] json) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gz = new java.util.zip.GZIPOutputStream(out) {
            {
                def.setLevel(java.util.zip.Deflater.BEST_SPEED);
            }
        }) {
            gz.write(json);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** The batch's JSON, as the agent writes it. */
    byte[] json() {
        return json;
    }

    /** The same JSON with every field name replaced by {@code n0}, {@code n1}, … (one per distinct name). */
    static byte[] shortNames(byte[] json) {
        java.util.Map<String, String> names = new java.util.HashMap<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"([a-z_]+)\":")
                .matcher(new String(json, java.nio.charset.StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, "\"" + names.computeIfAbsent(m.group(1), k -> "n" + names.size()) + "\":");
        }
        m.appendTail(out);
        return out.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * The sizes the benchmarks read: the batch, one reading written alone, and each with short names
     * ({@code exec:exec … "-Dexec.args=-cp %classpath dev.trainwatch.collector.ingest.DecodeSplit"}).
     */
    public static void main(String[] args) {
        DecodeSplit d = new DecodeSplit();
        d.setUp();
        List<String> one = List.of(String.format("GPU-%08x-0000-4000-8000-%012x", 7, 0));
        byte[] reading = WireCodec.toBytes(HttpFleetLoad.samples(one, 1.7e9, 1000, 85_899_345_920L).get(0));
        System.out.printf("batch of %d readings: %d bytes of JSON, %d with short names%n", GPUS * POLLS,
                d.json.length, d.shortNames.length);
        System.out.printf("the batch gzipped at zlib's fastest level: %d bytes%n", d.gzipped.length);
        System.out.printf("one reading: %d bytes of JSON, %d with short names%n", reading.length,
                shortNames(reading).length);
    }

    /** The same batch gzipped as the agent does it (zlib's fastest level, no header fields). */
    private byte[] gzipped;
    private final BodyDecoder decoder = new BodyDecoder(64L << 20);

    /** What the collector does before reading: the agent's gzip body inflated (the JDK's GZIPInputStream). */
    @Benchmark
    public int inflate() {
        return decoder.decodeInPlace(gzipped, "gzip").length();
    }

    private AgentBatch decoded;
    private final InputValidator validator = new InputValidator(dev.trainwatch.collector.config.CollectorConfig.Limits.defaults());

    /** What the collector does after reading: every field of every reading checked against its range. */
    @Benchmark
    public AgentBatch validate() {
        validator.check(decoded);
        return decoded;
    }

    /** What the collector does: the records, through the plain reader. */
    @Benchmark
    public AgentBatch records() {
        return BodyDecoder.PLAIN_BATCH.read(json, json.length);
    }

    /** The records, through the codec generated from them (avaje-jsonb's adapters on its own parser). */
    @Benchmark
    public AgentBatch generated() {
        return GENERATED.fromJson(json);
    }

    /** The records, through databind (the wire codec's mapper, as the collector configures it). */
    @Benchmark
    public AgentBatch databind() {
        return BodyDecoder.batchByDatabind(json);
    }

    private static final io.avaje.jsonb.JsonType<AgentBatch> GENERATED = WireCodec.type(AgentBatch.class);

    /** Every token, with every number and string converted: the least any reader of this JSON does. */
    @Benchmark
    public double tokensAndValues() throws IOException {
        double sum = 0;
        try (JsonParser p = factory.createParser(json, 0, json.length)) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t == JsonToken.VALUE_NUMBER_FLOAT) {
                    sum += p.getDoubleValue();
                } else if (t == JsonToken.VALUE_NUMBER_INT) {
                    sum += p.getLongValue();
                } else if (t == JsonToken.VALUE_STRING) {
                    sum += p.getText().length();
                }
            }
        }
        return sum;
    }

    /** The tokens alone (jackson-core finds each value's extent; numbers are converted only when asked). */
    @Benchmark
    public int tokens() throws IOException {
        return tokens(json);
    }

    /** The tokens alone, of the same readings with short field names: what the names cost. */
    @Benchmark
    public int tokensShortNames() throws IOException {
        return tokens(shortNames);
    }

    private int tokens(byte[] body) throws IOException {
        int n = 0;
        try (JsonParser p = factory.createParser(body, 0, body.length)) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                n++;
            }
        }
        return n;
    }
}
