package dev.trainwatch.agent.log;

/**
 * Cuts bytes into segments at {@code \n} and {@code \r} (a tqdm bar redraws with {@code \r} and may write no newline
 * for hours); a segment over the cap is dropped whole and skipped to its terminator, so memory stays bounded. Safe
 * on UTF-8: neither byte occurs inside a multi-byte sequence.
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

    void finish(Sink sink) {
        if (!skipping && partialLength > 0) {
            sink.segment(partial, 0, partialLength);
        }
        reset(false);
    }

    void reset(boolean skipFirst) {
        partialLength = 0;
        skipping = skipFirst;
        if (partial.length > 64 * 1024) {
            partial = new byte[256];
        }
    }

    int pendingBytes() {
        return skipping ? 0 : partialLength;
    }

    boolean skipping() {
        return skipping;
    }

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
