package dev.trainwatch.collector.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/**
 * How a {@code /metrics} answer is compressed: gzip when the scraper accepts it, at the fastest level, on the worker
 * that rendered the text rather than the event loop (where a flooded collector's body stalled ingest).
 */
public final class ScrapeEncoding {

    private ScrapeEncoding() {
    }

    /** Whether an {@code Accept-Encoding} header accepts gzip (by name, or {@code *}), with a q-value above 0. */
    static boolean acceptsGzip(String acceptEncoding) {
        if (acceptEncoding == null) {
            return false;
        }
        boolean star = false;
        for (String part : acceptEncoding.split(",")) {
            String[] pieces = part.split(";");
            String coding = pieces[0].trim().toLowerCase(Locale.ROOT);
            boolean refused = false;
            for (int i = 1; i < pieces.length; i++) {
                String parameter = pieces[i].trim().toLowerCase(Locale.ROOT).replace(" ", "");
                if (parameter.startsWith("q=")) {
                    refused = isZero(parameter.substring(2));
                }
            }
            if (coding.equals("gzip") || coding.equals("x-gzip")) {
                return !refused;
            }
            if (coding.equals("*")) {
                star = !refused;
            }
        }
        return star;
    }

    private static boolean isZero(String q) {
        try {
            return Double.parseDouble(q) == 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** {@code text} as a gzip member at the fastest level. */
    public static byte[] gzip(byte[] text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(512, text.length / 16));
        try (GZIPOutputStream gzip = new FastGzip(out)) {
            gzip.write(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static final class FastGzip extends GZIPOutputStream {
        FastGzip(ByteArrayOutputStream out) throws IOException {
            super(out, 64 * 1024);
            def.setLevel(Deflater.BEST_SPEED);
        }
    }
}
