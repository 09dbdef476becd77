package dev.trainwatch.cli.logging;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * One JSON object per line: {@code time} (RFC 3339, UTC), {@code level}, {@code component}, {@code message}, and
 * {@code error} and {@code repeated} when they apply — the fields log shippers (Loki, Elasticsearch) index.
 */
final class JsonLineFormatter {
    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonLineFormatter() {}

    static String format(LogLine line) {
        ObjectNode node = JSON.createObjectNode();
        node.put("time", DateTimeFormatter.ISO_INSTANT.format(line.time().truncatedTo(ChronoUnit.MILLIS)));
        node.put("level", line.level());
        node.put("component", line.component());
        node.put("message", line.message());
        if (line.error() != null) {
            node.put("error", line.error());
        }
        if (line.repeated() > 0) {
            node.put("repeated", line.repeated());
            node.put("repeated_interval_seconds", RepeatLimiter.INTERVAL.toSeconds());
        }
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            // An ObjectNode of strings and numbers always serialises; keep the record rather than lose it.
            return "{\"level\":\"ERROR\",\"message\":\"log record could not be encoded\"}";
        }
    }
}
