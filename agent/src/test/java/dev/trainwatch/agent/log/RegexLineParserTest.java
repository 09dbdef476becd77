package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class RegexLineParserTest {

    @Test
    void namedGroupsWithUnderscoresMapToFields() {
        StepLineParser p = StepLineParsers.forFormat(
                "iter (?<step>\\d+)/\\d+ .*?dt=(?<time>[\\d.]+)s data=(?<data_time>[\\d.]+)s loss=(?<loss>\\S+) "
                        + "lr=(?<lr>\\S+) gn=(?<grad_norm>[\\d.]+) rank=(?<rank>\\d+)");
        StepEvent e = p.parse("[W] iter 1200/90000 (1.3%) dt=1.912s data=0.105s loss=0.2210 lr=1.5e-05 gn=0.43 rank=2");
        assertThat(e.step()).isEqualTo(1200);
        assertThat(e.timeS()).isEqualTo(1.912);
        assertThat(e.dataTimeS()).isEqualTo(0.105);
        assertThat(e.loss()).isEqualTo(0.2210);
        assertThat(e.lr()).isEqualTo(1.5e-5);
        assertThat(e.gradNorm()).isEqualTo(0.43);
        assertThat(e.rank()).isEqualTo(2);
        assertThat(p.parse("something else")).isNull();
    }

    @Test
    void rateBecomesTimeAndIntervalComesFromStepGaps() {
        StepLineParser p = StepLineParsers.forFormat("step=(?<step>\\d+) (?<rate>[\\d.]+) it/s");
        assertThat(p.parse("step=50 2.00 it/s").timeS()).isEqualTo(0.5);
        assertThat(p.parse("step=100 4.00 it/s").intervalSteps()).isEqualTo(50);
    }

    @Test
    void invalidRegexIsOneClearLine() {
        assertThatThrownBy(() -> StepLineParsers.forFormat("step (?<step>\\d+"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid log format regex: Unclosed group")
                .hasMessageNotContaining("\n");
    }

    @Test
    void regexWithoutStepGroupIsRejected() {
        assertThatThrownBy(() -> StepLineParsers.forFormat("loss=(?<loss>[0-9.]+)"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("log format regex needs a named group (?<step>\\d+) for the step number: loss=(?<loss>[0-9.]+)");
        assertThatThrownBy(() -> LogTailer.open(Path.of("x.log"), "no groups", Fixtures.CLOCK))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void presetNamesAreCaseInsensitive() {
        assertThat(StepLineParsers.forFormat("PixArt").name()).isEqualTo("pixart");
        assertThat(StepLineParsers.forFormat(null).name()).isEqualTo("auto");
        assertThat(StepLineParsers.forFormat("Open-Sora").name()).isEqualTo("opensora");
    }
}
