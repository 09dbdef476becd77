package dev.trainwatch.collector.http;

import java.util.Locale;

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
}
