package dev.trainwatch.cli.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineAssemblerTest {

    private final List<String> lines = new ArrayList<>();
    private final LineAssembler assembler = new LineAssembler(16,
            (bytes, offset, length) -> lines.add(new String(bytes, offset, length, StandardCharsets.UTF_8)));

    private void feed(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        assembler.feed(bytes, 0, bytes.length);
    }

    @Test
    void cutsAtNewlinesAndCarriageReturnsAcrossReads() {
        feed("Step/Ep");
        feed("och [1/0]\r\nbar 1\rbar 2\r");
        feed("last");
        assertThat(lines).containsExactly("Step/Epoch [1/0]", "bar 1", "bar 2");
        assembler.finish();
        assertThat(lines).endsWith("last");
    }

    @Test
    void dropsALineLongerThanTheCapAndRecoversAtTheNextOne() {
        feed("0123456789abcdefXYZ\nshort\n");
        assertThat(lines).containsExactly("short");
    }
}
