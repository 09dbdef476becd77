package dev.trainwatch.cli.logging;

import dev.trainwatch.protocol.wire.WireCodec;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One JSON object per line ({@code time}, {@code level}, {@code component}, {@code message}, {@code error},
 * {@code repeated}), written with {@link WireCodec} so a process logging JSON loads no jackson-databind.
 */
final class JsonLineFormatter {

    private JsonLineFormatter() {}

    static String format(LogLine line) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("time", LogTime.format(line.time()));
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
