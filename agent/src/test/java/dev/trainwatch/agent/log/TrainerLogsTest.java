package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.testing.SettableClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real output of today's DiT trainers (diffusion-pipe's DeepSpeed lines, ai-toolkit's string postfix, musubi-tuner's
 * {@code avr_loss} bar under a GUI's prefixes), collected from public issue threads with their sources in
 * {@code src/test/resources/logs/trainers/SOURCES.md}, read through the production tailer with the auto-detected
 * format: every (step, loss) pair, and no step from a caching or loading bar.
 */
@Timeout(30)
class TrainerLogsTest {

    @TempDir
    Path dir;

    private List<StepEvent> read(String name) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, Fixtures.bytes("trainers/" + name));
        return Fixtures.readFile(file, "auto");
    }

    @Test
    void diffusionPipePrintsDeepSpeedsStepLine() throws IOException {
        List<StepEvent> events = read("diffusion-pipe_issue179.log");
        assertThat(events).extracting(StepEvent::step).containsExactly(78L, 79L, 80L, 81L, 82L, 83L);
        assertThat(events).extracting(StepEvent::loss).containsExactly(0.1150, 0.0814, 0.0995, 0.1480, 0.0812, 0.0765);
        assertThat(events).extracting(StepEvent::timeS).containsExactly(18.305, 18.202, 18.323, 18.141, 18.243, 18.142);
        StepEvent first = events.get(0);
        // 0.219 samples/s over 18.305 s: a global batch of 4 (gradient accumulation 4 of micro-batch 1).
        assertThat(first.samples()).isEqualTo(4.0);
        assertThat(first.lr()).isCloseTo(1.5644e-05, within(1e-12));
        assertThat(Fixtures.at(events, 79).intervalSteps()).isEqualTo(1);
    }

    @Test
    void aWanRunOnFourGpusUnderDiffusionPipe() throws IOException {
        List<StepEvent> events = read("diffusion-pipe_issue410.log");
        assertThat(events).extracting(StepEvent::step).containsExactly(1L, 2L, 3L, 4L);
        assertThat(events).extracting(StepEvent::loss).containsExactly(0.0614, 0.0571, 0.0359, 0.1193);
        assertThat(events.get(3).timeS()).isEqualTo(533.263);
    }

    @Test
    void aiToolkitsStringPostfixCarriesTheLossAndTheLearningRate() throws IOException {
        List<StepEvent> events = read("ai-toolkit_issue818.log");
        assertThat(events).extracting(StepEvent::step).containsExactly(19L, 49L);
        assertThat(events).extracting(StepEvent::loss).containsExactly(1.038, 0.9602);
        assertThat(events.get(0).timeS()).isEqualTo(17.64);
        assertThat(events.get(0).lr()).isEqualTo(1.0e-4);
    }

    @Test
    void musubiBarsUnderAGuisPrefixesTakeEachStepsLastFrame() throws IOException {
        List<StepEvent> events = read("musubi_issue477.log");
        assertThat(events).extracting(StepEvent::step).containsExactly(36L, 37L, 38L);
        assertThat(events).extracting(StepEvent::loss).containsExactly(0.0796, 0.0853, 0.0806);
        assertThat(events).extracting(StepEvent::timeS).containsExactly(21.93, 21.61, 21.45);
    }

    @Test
    void aCachingBarIsOneCachingPhaseWhateverItsRedraws() throws IOException {
        Path file = dir.resolve("caching.log");
        // The real frame of AI-Toolkit-Easy-Install #55, redrawn as its bar does.
        String frame = new String(Fixtures.bytes("trainers/ai-toolkit-easy-install_issue55_caching.log"),
                StandardCharsets.UTF_8).strip();
        Files.writeString(file, frame + "\r" + frame + "\r" + frame + "\n");
        SettableClock clock = new SettableClock(Fixtures.NOW);
        try (LogTailer tailer = new LogTailer(file, StepLineParsers.forFormat("auto"), clock, Long.MAX_VALUE,
                LogTailer.DEFAULT_MAX_LINE_BYTES)) {
            assertThat(tailer.poll()).isEmpty();
            List<AgentEvent> phases = tailer.drainEvents();
            assertThat(phases).extracting(AgentEvent::message).containsExactly("caching");
            assertThat(phases.get(0).progress()).isEqualTo(new PhaseProgress(23, 26L, 1 / 134.77));
        }
    }

    @Test
    void cachingAndLoadingBarsAreNeverSteps() throws IOException {
        assertThat(read("ai-toolkit-easy-install_issue55_caching.log")).isEmpty();
        assertThat(read("kohya-ss_issue1904_loading.log")).isEmpty();
    }

    @Test
    void finetrainersGlobalAverageLossIsTheStepsLoss() {
        // finetrainers' bar (its train.py sets the postfix grad_norm, global_avg_loss, global_max_loss).
        TqdmBar bar = TqdmBar.parse("Training steps:  10%|#         | 100/1000 [01:40<15:00,  1.00s/it, grad_norm=0.21,"
                + " global_avg_loss=1.33, global_max_loss=1.52]");
        assertThat(bar).isNotNull();
        assertThat(bar.loss()).isEqualTo(1.33);
    }

    @Test
    void oneTrainersStepBarStartsAgainEveryEpochAndCountsOnGlobally() throws IOException {
        List<StepEvent> events = read("onetrainer_wrapper_readme_epochs.log");
        // 13 epochs of 39 steps; the run's last backup is named backup-507-13-0.
        assertThat(events).extracting(StepEvent::step).containsExactly(39L, 78L, 117L, 156L, 195L, 234L, 273L, 312L,
                351L, 390L, 429L, 468L, 507L);
        assertThat(events).extracting(StepEvent::loss).startsWith(0.00467, 0.287).endsWith(0.179);
        assertThat(events).extracting(StepEvent::timeS).startsWith(2.27, 3.50).endsWith(1.69);
    }

    @Test
    void oneTrainersBarRedrawnOrRestartedFrameByFrame() {
        // Frames as a live console writes them (the real bar's text, counter and elapsed time varied): a redraw of
        // the finished frame is the same step; the counter going back is the next epoch.
        TqdmLineParser parser = new TqdmLineParser();
        String bar = "step: 100%%|##########| %d/39 [%s<00:00,  2.27s/it, loss=%s, smooth loss=0.133]";
        assertThat(parser.parse(String.format(bar, 38, "01:26", "0.0112")).step()).isEqualTo(38L);
        assertThat(parser.parse(String.format(bar, 39, "01:28", "0.00467")).step()).isEqualTo(39L);
        assertThat(parser.parse(String.format(bar, 39, "01:28", "0.00467")).step()).isEqualTo(39L);
        assertThat(parser.parse(String.format(bar, 1, "00:02", "0.287")).step()).isEqualTo(40L);
        assertThat(parser.parse(String.format(bar, 2, "00:04", "0.301")).step()).isEqualTo(41L);
    }

    @Test
    void aStepBarPrintedAfterAnOldWordedOomStillCounts() throws IOException {
        // kohya_ss #1202: the bar's postfix is the old `loss=`, its frame after the wrapped OOM message.
        List<StepEvent> events = read("kohya_ss_issue1202_oom_wrapped.log");
        assertThat(events).extracting(StepEvent::step).containsExactly(1L);
        assertThat(events.get(0).loss()).isEqualTo(0.473);
        assertThat(events.get(0).timeS()).isEqualTo(3.59);
    }
}
