package dev.trainwatch.protocol.wire;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/** The agent's batches' and the collector's scrapes' gzip: the sender pays the CPU, the bytes cross a LAN. */
public final class Gzip {

    private Gzip() {
    }

    /** {@code bytes} as one gzip member at {@link Deflater#BEST_SPEED}, through the JDK's stream. */
    public static byte[] fastest(byte[] bytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(512, bytes.length / 8));
        // the stream's buffer takes compressed output: 64 KB for a scrape's megabytes, less for a batch's kilobytes
        try (GZIPOutputStream gzip = new GZIPOutputStream(out, Math.max(512, Math.min(64 * 1024, bytes.length / 4))) {
            {
                def.setLevel(Deflater.BEST_SPEED);
            }
        }) {
            gzip.write(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
        }
        return out.toByteArray();
    }
}
