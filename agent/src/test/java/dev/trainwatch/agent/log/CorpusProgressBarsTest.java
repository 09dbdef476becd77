package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.testing.RequiredFixtures;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real tqdm training bars from public repositories and issue threads (the shared corpus next to the checkout; its
 * README names each source), read through the production tailer as the agent reads them: each step once, with the
 * time of its frames and the loss of its last frame.
 */
class CorpusProgressBarsTest {

    @TempDir
    Path dir;

    private List<StepEvent> read(String name) throws IOException {
        Path log = dir.resolve(name);
        Files.copy(RequiredFixtures.corpusLog(name), log);
        return Fixtures.readFile(log, "auto");
    }

    @Test
    void diffusersEightGpuRunHasStepOneAndItsFinalStepOnceWithTheirLosses() throws IOException {
        List<StepEvent> events = read("accelerate_sd15_8gpu_deeplink.txt");
        assertThat(events).extracting(StepEvent::step).doesNotContain(0L).contains(1L, 101L);
        assertThat(events.stream().filter(e -> e.step() == 101L)).hasSize(1);
        StepEvent first = Fixtures.at(events, 1);
        assertThat(first.timeS()).isCloseTo(9.52, within(1e-9));
        assertThat(first.loss()).isEqualTo(0.0413);
        StepEvent last = Fixtures.at(events, 101);
        // The later 101/101 frame (7.06 s) is the same step drawn again: the first frame's time, the same loss.
        assertThat(last.timeS()).isCloseTo(6.75, within(1e-9));
        assertThat(last.loss()).isEqualTo(0.0111);
    }

    @Test
    void fourNodesBarsInterleavedInOneOutputAreNotRedrawsOfOneBar() throws IOException {
        List<StepEvent> events = read("accelerate_sd_4node_deeplink.txt");
        // Step 1 is drawn by four nodes' bars (33.68, 35.74, 35.68, 35.75 s/it, each with its node's loss): the
        // first one read stands; the garbled frame is not a step.
        StepEvent first = Fixtures.at(events, 1);
        assertThat(first.timeS()).isCloseTo(33.68, within(1e-9));
        assertThat(first.loss()).isEqualTo(0.0476);
        StepEvent last = Fixtures.at(events, 101);
        assertThat(last.timeS()).isCloseTo(8.59, within(1e-9));
        assertThat(last.loss()).isEqualTo(0.0482);
    }

    @Test
    void diffusersLoraFrameGluedToALoggerLine() throws IOException {
        List<StepEvent> events = read("accelerate_sd15_lora_k8s_deeplink.txt");
        assertThat(events).extracting(StepEvent::step).containsExactly(27L);
        assertThat(events.get(0).timeS()).isCloseTo(1 / 2.23, within(1e-9));
        assertThat(events.get(0).loss()).isEqualTo(0.0852);
    }

    @Test
    void kohyaStepsWithANanAverageLoss() throws IOException {
        List<StepEvent> events = read("kohya_issue2137_steps_nan.txt");
        assertThat(events).extracting(StepEvent::step).containsExactly(41L, 82L, 123L, 164L, 205L);
        assertThat(events).extracting(StepEvent::timeS).containsExactly(1.24, 1.22, 1.21, 1.21, 1.21);
        assertThat(events).allSatisfy(e -> assertThat(e.loss()).isNaN());
    }
}
