package dev.trainwatch.agent.log;

/**
 * Cuts a byte stream into segments at {@code \n} and {@code \r}. Carriage returns end a segment too, because a
 * tqdm bar redraws itself with {@code \r} and may not write a newline for hours: each frame is a segment of its
 * own, and a bar never becomes one huge line. An unterminated tail is kept until its terminator arrives. A
 * segment longer than the cap is dropped whole — the bytes seen so far are discarded and the rest is skipped up
 * to the next terminator — so memory stays bounded whatever the file holds. Bytes {@code \n}/{@code \r} never
 * occur inside a UTF-8 multi-byte sequence, so cutting on them is safe. Not thread-safe.
 */
final class LineSplitter {

    /** Receives complete segments; the array is only valid during the call. */
    interface Sink {
        void segment(byte[] bytes, int offset, int length);
    }

    private final int maxSegmentBytes;
    private byte[] partial = new byte[256];
    private int partialLength;
    private boolean skipping;
    private long droppedSegments;

    LineSplitter(int maxSegmentBytes) {
        if (maxSegmentBytes < 1) {
            throw new IllegalArgumentException("maximum line length must be at least one byte");
        }
        this.maxSegmentBytes = maxSegmentBytes;
    }

    /** Feeds {@code length} bytes; complete segments go to {@code sink}, in order. */
    void feed(byte[] bytes, int offset, int length, Sink sink) {
        int end = offset + length;
        int start = offset;
        int terminator;
        while ((terminator = ByteScan.indexOfEither(bytes, start, end, (byte) '\n', (byte) '\r')) >= 0) {
            complete(bytes, start, terminator - start, sink);
            start = terminator + 1;
        }
        keep(bytes, start, end - start);
    }

    /** Emits the unterminated tail, if any, as a final segment (the file was replaced; its last line is done). */
    void finish(Sink sink) {
        if (!skipping && partialLength > 0) {
            sink.segment(partial, 0, partialLength);
        }
        reset(false);
    }

    /** Forgets the tail; with {@code skipFirst} the bytes up to the next terminator are skipped too. */
    void reset(boolean skipFirst) {
        partialLength = 0;
        skipping = skipFirst;
        if (partial.length > 64 * 1024) {
            partial = new byte[256];
        }
    }

    /** Bytes of an unterminated segment kept for its terminator (0 while skipping). */
    int pendingBytes() {
        return skipping ? 0 : partialLength;
    }

    /** True while the rest of an over-long segment is being skipped. */
    boolean skipping() {
        return skipping;
    }

    /** Segments dropped for exceeding the cap, since creation. */
    long droppedSegments() {
        return droppedSegments;
    }

    private void complete(byte[] bytes, int offset, int length, Sink sink) {
        if (skipping) {
            skipping = false;
            partialLength = 0;
            return;
        }
        if (partialLength == 0) {
            if (length > maxSegmentBytes) {
                droppedSegments++;
            } else if (length > 0) {
                sink.segment(bytes, offset, length);
            }
            return;
        }
        if (partialLength + length > maxSegmentBytes) {
            droppedSegments++;
            reset(false);
            return;
        }
        append(bytes, offset, length);
        sink.segment(partial, 0, partialLength);
        partialLength = 0;
    }

    private void keep(byte[] bytes, int offset, int length) {
        if (skipping || length == 0) {
            return;
        }
        if (partialLength + length > maxSegmentBytes) {
            droppedSegments++;
            reset(true);
            return;
        }
        append(bytes, offset, length);
    }

    private void append(byte[] bytes, int offset, int length) {
        int needed = partialLength + length;
        if (needed > partial.length) {
            int grown = Math.max(needed, Math.min(maxSegmentBytes, partial.length * 2));
            byte[] bigger = new byte[grown];
            System.arraycopy(partial, 0, bigger, 0, partialLength);
            partial = bigger;
        }
        System.arraycopy(bytes, offset, partial, partialLength, length);
        partialLength = needed;
    }
}
