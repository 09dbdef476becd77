package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.support.Payloads;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Serialised agent batches of 64 GPUs for the ingest benchmarks, one per host, with the {@code seq} digits patched
 * in place before each use so every batch is new to the fleet (a replay would take the cheap duplicate path).
 */
final class BenchPayloads {
    static final int GPUS_PER_BATCH = 64;
    /** 13 digits from here on: patching never changes the length. */
    static final long FIRST_SEQ = 1_000_000_000_000L;

    private final List<byte[]> templates = new ArrayList<>();
    private final int[] seqOffsets;
    private final long[] nextSeq;

    BenchPayloads(int hosts, double ts) {
        seqOffsets = new int[hosts];
        nextSeq = new long[hosts];
        for (int h = 0; h < hosts; h++) {
            byte[] json = Payloads.json(Payloads.batch("node-" + h, FIRST_SEQ, ts, GPUS_PER_BATCH, "run-" + (h / 8)));
            String text = new String(json, StandardCharsets.UTF_8);
            seqOffsets[h] = text.indexOf("\"seq\":" + FIRST_SEQ) + "\"seq\":".length();
            nextSeq[h] = FIRST_SEQ;
            templates.add(json);
        }
    }

    int hosts() {
        return templates.size();
    }

    /** The bytes of host {@code h}'s next batch (the shared template, patched: use before the next call). */
    byte[] next(int h) {
        byte[] json = templates.get(h);
        long seq = ++nextSeq[h];
        int at = seqOffsets[h] + 12;
        for (int i = 0; i < 13; i++) {
            json[at - i] = (byte) ('0' + seq % 10);
            seq /= 10;
        }
        return json;
    }

    /** A copy of host {@code h}'s next batch, safe to hand to another thread. */
    synchronized byte[] nextCopy(int h) {
        return next(h).clone();
    }
}
