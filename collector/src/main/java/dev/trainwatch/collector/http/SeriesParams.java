package dev.trainwatch.collector.http;

import dev.trainwatch.collector.ingest.ApiError;
import dev.trainwatch.collector.ingest.BodyDecoder;
import dev.trainwatch.collector.series.SeriesRequest;
import java.time.DateTimeException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/** The query of {@code GET /v1/runs/{id}/series}: anything malformed is a 400 naming the parameter, nothing clamped. */
final class SeriesParams {

    /** Epoch milliseconds below this (March 1973) are almost surely unix seconds sent by mistake. */
    static final long MIN_SINCE_MS = 100_000_000_000L;
    /** Epoch milliseconds above this (year 2286, the API's timestamp limit) are refused. */
    static final long MAX_SINCE_MS = 10_000_000_000_000L;
    private static final int MAX_PARAM_LENGTH = 64;
    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,16}");
    /** An RFC 3339 offset whose '+' a client left unencoded in the query: it arrives as a space. */
    private static final Pattern SPACE_OFFSET = Pattern.compile("(.*[0-9]) ([0-9]{2}:[0-9]{2})");

    private SeriesParams() {
    }

    /** Parses the values of {@code since}, {@code max_points} and {@code gpus}; throws {@link ApiError} 400. */
    static SeriesRequest parse(List<String> since, List<String> maxPoints, List<String> gpus) {
        return new SeriesRequest(since(single("since", since)), maxPoints(single("max_points", maxPoints)),
                gpus(single("gpus", gpus)));
    }

    private static String single(String name, List<String> values) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw ApiError.badRequest(name + " is given " + values.size() + " times; give it once");
        }
        String value = values.get(0);
        if (value.length() > MAX_PARAM_LENGTH) {
            throw ApiError.badRequest(name + " is longer than " + MAX_PARAM_LENGTH + " characters");
        }
        return value;
    }

    /** Unix seconds from epoch milliseconds or an RFC 3339 date-time; null when absent. */
    static Double since(String raw) {
        if (raw == null) {
            return null;
        }
        if (DIGITS.matcher(raw).matches()) {
            long ms = Long.parseLong(raw);
            if (ms < MIN_SINCE_MS) {
                throw ApiError.badRequest("since=" + raw + " looks like unix seconds; send epoch milliseconds ("
                        + raw + "000) or an RFC 3339 time such as 2026-01-01T12:00:00Z");
            }
            if (ms > MAX_SINCE_MS) {
                throw ApiError.badRequest("since=" + raw + " is beyond the year 2286; send epoch milliseconds or"
                        + " an RFC 3339 time");
            }
            return ms / 1000.0;
        }
        String text = raw.strip();
        var unencodedPlus = SPACE_OFFSET.matcher(text);
        if (unencodedPlus.matches()) {
            text = unencodedPlus.group(1) + "+" + unencodedPlus.group(2);
        }
        try {
            // RFC 3339 allows a lower-case 't'/'z' and a space between date and time.
            String normalized = text.toUpperCase(Locale.ROOT);
            if (normalized.length() > 10 && normalized.charAt(10) == ' ') {
                normalized = normalized.substring(0, 10) + "T" + normalized.substring(11);
            }
            OffsetDateTime at = OffsetDateTime.parse(normalized, DateTimeFormatter.ISO_OFFSET_DATE_TIME);
            long ms = at.toInstant().toEpochMilli();
            if (ms < 0 || ms > MAX_SINCE_MS) {
                throw ApiError.badRequest("since must be between 1970 and 2286, got '" + BodyDecoder.printable(raw, 64)
                        + "'");
            }
            return ms / 1000.0;
        } catch (DateTimeException | ArithmeticException e) {
            throw ApiError.badRequest("since must be epoch milliseconds or an RFC 3339 time such as"
                    + " 2026-01-01T12:00:00Z (with a zone), got '" + BodyDecoder.printable(raw, 64) + "'");
        }
    }

    static int maxPoints(String raw) {
        if (raw == null) {
            return SeriesRequest.DEFAULT_POINTS;
        }
        String rule = "max_points must be an integer from " + SeriesRequest.MIN_POINTS + " to "
                + SeriesRequest.MAX_POINTS + ", got '" + BodyDecoder.printable(raw, 64) + "'";
        long value = DIGITS.matcher(raw).matches() ? Long.parseLong(raw) : -1;
        if (value < SeriesRequest.MIN_POINTS || value > SeriesRequest.MAX_POINTS) {
            throw ApiError.badRequest(rule);
        }
        return (int) value;
    }

    static boolean gpus(String raw) {
        if (raw == null || raw.equals("true")) {
            return true;
        }
        if (raw.equals("false")) {
            return false;
        }
        throw ApiError.badRequest("gpus must be true or false, got '" + BodyDecoder.printable(raw, 64) + "'");
    }
}
