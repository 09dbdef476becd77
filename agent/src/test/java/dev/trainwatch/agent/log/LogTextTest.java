package dev.trainwatch.agent.log;

import static dev.trainwatch.agent.log.Fixtures.unix;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class LogTextTest {

    @Test
    void stripsColoursCursorMovesAndTitles() {
        assertThat(LogText.stripAnsi("[\u001b[34m2024-05-01 12:00:00\u001b[0m] hi")).isEqualTo("[2024-05-01 12:00:00] hi");
        assertThat(LogText.stripAnsi("\u001b[A\u001b[2KSteps: 1%")).isEqualTo("Steps: 1%");
        assertThat(LogText.stripAnsi("\u001b]0;title\u0007x\u001b(B")).isEqualTo("x");
        assertThat(LogText.stripAnsi("plain")).isSameAs("plain");
    }

    @Test
    void timestampPrefixes() {
        ZoneId utc = ZoneOffset.UTC;
        assertThat(LogText.timestamp("2024-05-01 12:00:00,123 - PixArt - INFO - x", utc))
                .isCloseTo(unix("2024-05-01T12:00:00.123Z"), within(1e-6));
        assertThat(LogText.timestamp("[2024-05-01 12:00:00] (step=0000100)", utc))
                .isEqualTo(unix("2024-05-01T12:00:00Z"));
        assertThat(LogText.timestamp("2024-05-01T12:00:00.5+02:00 msg", utc))
                .isCloseTo(unix("2024-05-01T10:00:00.5Z"), within(1e-6));
        assertThat(LogText.timestamp("[rank0]: 2024-05-01T12:00:00Z msg", ZoneId.of("Asia/Shanghai")))
                .isEqualTo(unix("2024-05-01T12:00:00Z"));
        assertThat(LogText.timestamp("05/01/2024 12:00:00 - INFO - __main__ - x", utc))
                .isEqualTo(unix("2024-05-01T12:00:00Z"));
        // Local times are in the clock's zone, as Python's asctime is local.
        assertThat(LogText.timestamp("2024-05-01 12:00:00,000 x", ZoneId.of("Asia/Shanghai")))
                .isEqualTo(unix("2024-05-01T04:00:00Z"));
        assertThat(LogText.timestamp("Step/Epoch [1/1] no time", utc)).isNull();
        assertThat(LogText.timestamp("2024-13-45 99:00:00 bad", utc)).isNull();
    }

    @Test
    void rankPrefixes() {
        assertThat(LogText.rankPrefix("[rank3]: Traceback")).isEqualTo(3);
        assertThat(LogText.rankPrefix("[default12]:Step/Epoch")).isEqualTo(12);
        assertThat(LogText.rankPrefix("[2024-05-01 12:00:00] x")).isNull();
        assertThat(LogText.rankPrefix("[W reducer.cpp:1360] x")).isNull();
    }

    @Test
    void numbersStopWhereTheyEnd() {
        assertThat(LineFields.doubleAfter("lr:1.000e-04s:(32, 32)", "lr:", 0)).isEqualTo(1.0e-4);
        assertThat(LineFields.doubleAfter("loss:nan, grad_norm:inf", "loss:", 0)).isNull();
        assertThat(LineFields.doubleAfter("step_loss:0.5, loss:0.25", "loss:", 0)).isEqualTo(0.25);
        assertThat(LineFields.doubleAt("-.5e", 0)).isEqualTo(-0.5);
        assertThat(LineFields.doubleAt(".", 0)).isNull();
    }

    @Test
    void fastNumbersAgreeWithParseDouble() {
        java.util.Random random = new java.util.Random(1);
        for (int i = 0; i < 200_000; i++) {
            String text = switch (i % 5) {
                case 0 -> String.format(java.util.Locale.ROOT, "%.3f", random.nextDouble() * 10);
                case 1 -> String.format(java.util.Locale.ROOT, "%.3e", random.nextDouble() * Math.pow(10, -random.nextInt(12)));
                case 2 -> String.format(java.util.Locale.ROOT, "%.4f", random.nextGaussian());
                case 3 -> Long.toString(random.nextLong() >>> random.nextInt(64));
                default -> String.format(java.util.Locale.ROOT, "%.9g", random.nextDouble() * Math.pow(10, random.nextInt(30) - 15));
            };
            assertThat(LineFields.doubleAt(text, 0)).as(text).isEqualTo(Double.parseDouble(text));
        }
    }
}
