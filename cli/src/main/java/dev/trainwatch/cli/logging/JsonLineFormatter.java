package dev.trainwatch.cli.logging;

import static java.time.format.DateTimeFormatter.ISO_INSTANT;

import dev.trainwatch.protocol.wire.WireCodec;
import java.time.temporal.ChronoUnit;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One JSON object per line with the fields log shippers (Loki, Elasticsearch) index. Written with {@link WireCodec}:
 * an agent logging JSON loads no jackson-databind.
 */
final class JsonLineFormatter {

    private JsonLineFormatter() {}

    static String format(LogLine line) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("time", ISO_INSTANT.format(line.time().truncatedTo(ChronoUnit.MILLIS)));
        fields.put("level", line.level());
        fields.put("component", line.component());
        fields.put("message", line.message());
        if (line.error() != null) {
            fields.put("error", line.error());
        }
        if (line.repeated() > 0) {
            fields.put("repeated", line.repeated());
            fields.put("repeated_interval_seconds", RepeatLimiter.INTERVAL.toSeconds());
        }
        return new String(WireCodec.toBytes(fields), StandardCharsets.UTF_8);
    }
}
