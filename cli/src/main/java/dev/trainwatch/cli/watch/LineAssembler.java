package dev.trainwatch.cli.watch;

import java.util.Arrays;

/**
 * Collects a byte stream into complete segments ended by {@code \n} or {@code \r} (a progress bar redraws with
 * {@code \r}), bounded in memory: a segment longer than the cap is dropped. Not thread-safe; one per stream.
 */
final class LineAssembler {

    /** Receives one complete segment, without its terminator; the array is only valid during the call. */
    interface Sink {
        void line(byte[] bytes, int offset, int length);
    }

    private final int maxBytes;
    private final Sink sink;
    private byte[] partial = new byte[256];
    private int length;
    private boolean overflowed;

    LineAssembler(int maxBytes, Sink sink) {
        this.maxBytes = maxBytes;
        this.sink = sink;
    }

    void feed(byte[] bytes, int offset, int count) {
        for (int i = offset; i < offset + count; i++) {
            byte b = bytes[i];
            if (b == '\n' || b == '\r') {
                emit();
            } else if (!overflowed) {
                if (length == maxBytes) {
                    overflowed = true;
                    length = 0;
                    continue;
                }
                if (length == partial.length) {
                    partial = Arrays.copyOf(partial, Math.min(maxBytes, partial.length * 2));
                }
                partial[length++] = b;
            }
        }
    }

    /** The stream ended: an unterminated last line is complete. */
    void finish() {
        if (length > 0) {
            emit();
        }
    }

    private void emit() {
        if (!overflowed && length > 0) {
            sink.line(partial, 0, length);
        }
        length = 0;
        overflowed = false;
    }
}
