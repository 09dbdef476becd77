package dev.trainwatch.collector.ingest;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.wire.WireCodec;
import io.avaje.jsonb.JsonType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.function.ToIntFunction;

/**
 * The CPU time of the calling thread per batch for each way of reading {@link DecodeSplit}'s batch (one node's 5 polls
 * of 8 GPUs), side by side in one run: the readers take turns in rounds of {@code BATCHES} reads, so load from
 * elsewhere on a shared machine falls on all of them alike. Prints each reader's median round and quartiles, and
 * whether its records equal databind's. Not a test:
 *
 * <pre>RUN -cp %classpath dev.trainwatch.collector.ingest.DecodeCpu [ROUNDS] [BATCHES]</pre>
 */
public final class DecodeCpu {

    private DecodeCpu() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        int batches = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        DecodeSplit split = new DecodeSplit();
        split.setUp();
        byte[] json = split.json();
        byte[] gzipped = DecodeSplit.gzip(json);
        BodyDecoder decoder = new BodyDecoder(64L << 20);
        JsonType<AgentBatch> generated = WireCodec.type(AgentBatch.class);
        AgentBatch reference = BodyDecoder.batchByDatabind(json);
        String[] names = {"databind", "plain reader", "generated codec", "gzip inflate"};
        @SuppressWarnings("unchecked")
        ToIntFunction<byte[]>[] readers = new ToIntFunction[] {
            (ToIntFunction<byte[]>) b -> BodyDecoder.batchByDatabind(b).gpus().size(),
            (ToIntFunction<byte[]>) b -> BodyDecoder.PLAIN_BATCH.read(b, b.length).gpus().size(),
            (ToIntFunction<byte[]>) b -> generated.fromJson(b).gpus().size(),
            (ToIntFunction<byte[]>) b -> decoder.decodeInPlace(gzipped, "gzip").length()};
        boolean[] agrees = {true, reference.equals(BodyDecoder.PLAIN_BATCH.read(json, json.length)),
            reference.equals(generated.fromJson(json)), true};
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[][] perBatch = new double[readers.length][rounds];
        long sink = 0;
        for (int r = -rounds / 3; r < rounds; r++) { // the first third warms up
            for (int k = 0; k < readers.length; k++) {
                long start = threads.getCurrentThreadCpuTime();
                for (int i = 0; i < batches; i++) {
                    sink += readers[k].applyAsInt(json);
                }
                if (r >= 0) {
                    perBatch[k][r] = (threads.getCurrentThreadCpuTime() - start) / 1000.0 / batches;
                }
            }
        }
        System.out.printf("%d bytes of JSON (%d gzipped), %d readings; %d rounds of %d batches (%d)%n", json.length,
                gzipped.length, reference.gpus().size(), rounds, batches, sink);
        for (int k = 0; k < readers.length; k++) {
            double[] v = perBatch[k].clone();
            Arrays.sort(v);
            System.out.printf("%-16s %7.1f µs of CPU a batch (quartiles %.1f–%.1f)%s%n", names[k], v[v.length / 2],
                    v[v.length / 4], v[3 * v.length / 4], agrees[k] ? "" : "; its records differ from databind's");
        }
    }
}
