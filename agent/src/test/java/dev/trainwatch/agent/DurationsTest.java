package dev.trainwatch.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void parsesMillisecondsSecondsAndMinutes() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("1s")).isEqualTo(Duration.ofSeconds(1));
        assertThat(Durations.parse("2.5s")).isEqualTo(Duration.ofMillis(2500));
        assertThat(Durations.parse(" 1m ")).isEqualTo(Duration.ofMinutes(1));
        assertThat(Durations.parse("100MS")).isEqualTo(Duration.ofMillis(100));
        assertThat(Durations.seconds(Duration.ofMillis(250))).isEqualTo(0.25);
    }

    @Test
    void rejectsWhatIsNotADuration() {
        assertThatThrownBy(() -> Durations.parse("1")).hasMessage("'1' is not a duration; use e.g. 500ms, 1s, 2.5s or 1m");
        assertThatThrownBy(() -> Durations.parse("fast")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Durations.parse("-1s")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Durations.parse("0.5ms")).hasMessageContaining("finer than a millisecond");
        assertThatThrownBy(() -> Durations.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }

    /** The hand-written reader accepts and refuses what the pattern (\d+(?:\.\d+)?)\s*(ms|s|m) did. */
    @Test
    void sameAsThePattern() {
        java.util.regex.Pattern format = java.util.regex.Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)");
        for (String text : java.util.List.of("1s", "1 s", "1\ts", "1\u000Bms", "2.5s", "2.s", ".5s", "1.5.5s", "1 . 5s",
                "10m", "1ms ", "1mss", "1h", "1", "s", "", "  250 MS ", "1\u2003s", "١s", "0s", "007ms", "1e3ms")) {
            boolean matches = format.matcher(text.strip().toLowerCase(java.util.Locale.ROOT)).matches();
            boolean parsed;
            try {
                Durations.parse(text);
                parsed = true;
            } catch (IllegalArgumentException e) {
                parsed = e.getMessage().contains("finer than");
            }
            assertThat(parsed).as(text).isEqualTo(matches);
        }
    }
}
