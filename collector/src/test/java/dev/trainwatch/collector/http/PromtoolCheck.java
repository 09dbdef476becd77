package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;

/** A structural check of a Prometheus text exposition, for tests that must not depend on promtool. */
final class PromtoolCheck {
    private static final Pattern SAMPLE = Pattern.compile(
            "[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\\n]|\\\\.)*\",?)*\\})? "
                    + "(-?[0-9.eE+-]+|NaN|[+-]Inf)( -?[0-9]+)?");

    private PromtoolCheck() {
    }

    /** Every line is a comment or a well-formed sample. */
    static void assertWellFormed(String exposition) {
        assertThat(exposition).isNotBlank();
        exposition.lines().filter(line -> !line.isEmpty() && !line.startsWith("#"))
                .forEach(line -> assertThat(SAMPLE.matcher(line).matches()).as("sample line: " + line).isTrue());
    }
}
