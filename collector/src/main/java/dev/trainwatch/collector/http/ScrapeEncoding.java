package dev.trainwatch.collector.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/**
 * How a {@code /metrics} answer is compressed: gzip when the scraper accepts it (Prometheus always does), made on
 * the worker that rendered the text, at the fastest level. Left to the HTTP server, a flooded collector's 7.8 MB of
 * text was deflated at level 6 on the event loop, 34 ms at best, during which no ingest request was read; level 1 takes
 * half of that for a body about a seventh larger (273 KB instead of 240 KB; {@code FloodLatency -Dgzip=false}).
 */
final class ScrapeEncoding {

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
    static byte[] gzip(byte[] text) {
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
