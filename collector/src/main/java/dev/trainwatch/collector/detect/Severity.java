package dev.trainwatch.collector.detect;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** How urgent an anomaly is. {@code critical} pages someone; {@code warning} is for the dashboard and chat. */
public enum Severity {
    WARNING,
    CRITICAL;

    /** {@code warning} or {@code critical}: the JSON value and the {@code severity} metric label. */
    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static Severity fromWireName(String name) {
        return valueOf(name.trim().toUpperCase(Locale.ROOT));
    }
}
