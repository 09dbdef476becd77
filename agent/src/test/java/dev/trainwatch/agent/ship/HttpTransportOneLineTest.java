package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The collector's answer in a log line: what {@code replaceAll("\\s+", " ").strip()} gave, without a pattern. */
class HttpTransportOneLineTest {

    @Test
    void sameAsTheRegularExpression() {
        for (String body : List.of("", " ", "ok", "{\"error\":\n  \"bad\"}\r\n", "\t a \u000B\f b \r\n c ",
                "\u2003 x \u2003", "a\u2003 \u2003b", "  lead", "trail  ", "é\n\nü", "x\u0085y")) {
            assertThat(HttpTransport.oneLine(body)).as(body).isEqualTo(body.replaceAll("\\s+", " ").strip());
        }
    }
}
