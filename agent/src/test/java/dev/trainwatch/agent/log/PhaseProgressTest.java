package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Caching, quantising and loading bars of real runs (sources in {@code logs/trainers/SOURCES.md}) are phases with
 * their progress, never steps, and a bar's redraws give an event at a bounded rate.
 */
@Timeout(30)
class PhaseProgressTest {

    @TempDir
    Path dir;

    private record Read(List<StepEvent> steps, List<AgentEvent> events) {
        List<AgentEvent> of(String kind) {
            return events.stream().filter(e -> kind.equals(e.message())).toList();
        }
    }

    private Read read(byte[] content) throws IOException {
        Path file = dir.resolve("train.log");
        Files.write(file, content);
        SettableClock clock = new SettableClock(Fixtures.NOW);
        try (LogTailer tailer = new LogTailer(file, StepLineParsers.forFormat("auto"), clock, Long.MAX_VALUE,
                LogTailer.DEFAULT_MAX_LINE_BYTES)) {
            List<StepEvent> steps = new ArrayList<>(tailer.poll());
            clock.set(Fixtures.NOW.plusSeconds(2));
            steps.addAll(tailer.poll());
            return new Read(steps, tailer.drainEvents());
        }
    }

    private Read read(String fixture) throws IOException {
        return read(Fixtures.bytes("trainers/" + fixture));
    }

    @Test
    void kohyasCachingLatentsBarIsTheCachingPhasesProgress() throws IOException {
        Read r = read("kohya_ss_issue1441_caching_latents.log");
        assertThat(r.steps()).isEmpty();
        // "checking cache validity..." and its bar are no phase; "caching latents..." is, and its bar its progress.
        assertThat(r.events()).extracting(AgentEvent::message).containsExactly("caching", "caching");
        assertThat(r.events().get(0).progress()).isNull();
        PhaseProgress p = r.events().get(1).progress();
        assertThat(p.done()).isEqualTo(14);
        assertThat(p.total()).isEqualTo(74);
        assertThat(p.perSecond()).isCloseTo(2.57, within(1e-9));
    }

    @Test
    void aiToolkitsQuantizingBarsAreTheQuantizingPhasesProgress() throws IOException {
        Read r = read("ai-toolkit_issue872_quantizing.log");
        assertThat(r.steps()).isEmpty();
        List<AgentEvent> quantizing = r.of("quantizing");
        assertThat(quantizing).extracting(e -> e.progress() == null ? null : e.progress().done())
                .containsExactly(null, 40L, null, 40L);
        assertThat(quantizing.get(1).progress().total()).isEqualTo(40);
        assertThat(quantizing.get(1).progress().perSecond()).isCloseTo(1 / 4.88, within(1e-9));
        assertThat(quantizing.get(3).progress().perSecond()).isCloseTo(1 / 3.35, within(1e-9));
        // "Loading checkpoint shards" is a loading phase with its 3/3; "Fetching 3 files" after "Loading transformer 2"
        // is that loading's progress, and the shards' 3/3 right after it says nothing new.
        assertThat(r.of("loading")).extracting(e -> e.progress() == null ? null : e.progress().done())
                .containsExactly(3L, null, 3L);
    }

    @Test
    void simpleTunersBucketBarsAreTheLatentCachesProgress() throws IOException {
        Read r = read("simpletuner_issue653_caching.log");
        assertThat(r.steps()).isEmpty();
        // Two frames with the same read time: the first is sent, the second is within the interval.
        assertThat(r.of("caching")).extracting(e -> e.progress() == null ? null : e.progress().done())
                .containsExactly(null, 504L);
        PhaseProgress p = r.of("caching").get(1).progress();
        assertThat(p.total()).isEqualTo(14080);
        assertThat(p.perSecond()).isCloseTo(1 / 1.57, within(1e-9));
    }

    @Test
    void aBarRedrawnThousandsOfTimesGivesBoundedEventsAndItsLastFrame() throws IOException {
        StringBuilder log = new StringBuilder("caching latents.\n");
        for (int i = 1; i <= 5000; i++) {
            log.append(String.format("%3d%%|#         | %d/5000 [00:%02d<00:00, 99.0it/s]\r", i * 100 / 5000, i, i % 60));
        }
        log.append("\nsteps:  10%|#         | 1/10 [00:01<00:09,  1.00s/it, avr_loss=0.25]\n");
        Read r = read(log.toString().getBytes(StandardCharsets.UTF_8));
        assertThat(r.steps()).extracting(StepEvent::step).containsExactly(1L);
        assertThat(r.of("caching")).extracting(e -> e.progress() == null ? null : e.progress().done())
                .containsExactly(null, 1L, 5000L);
    }

    @Test
    void aiToolkitsCaughtOomsAreCountedEvents() throws IOException {
        // Its words since ostris/ai-toolkit@3b1f7b0 (jobs/process/BaseSDTrainProcess.py), between steps of its bar.
        String banner = "################################################\n";
        String log = "my_lora:  10%|#         | 100/1000 [10:00<1:30:00,  6.00s/it, lr: 1.0e-04 loss: 4.2e-01]\n\n"
                + banner + "# OOM during training step, skipping batch 1/3 #\n" + banner + "\n"
                + banner + "# OOM during training step, skipping batch 2/3 #\n" + banner + "\n"
                + "my_lora:  10%|#         | 101/1000 [10:06<1:30:00,  6.00s/it, lr: 1.0e-04 loss: 4.1e-01]\n";
        Read r = read(log.getBytes(StandardCharsets.UTF_8));
        assertThat(r.steps()).extracting(StepEvent::step).containsExactly(100L, 101L);
        assertThat(r.events()).extracting(AgentEvent::kind).containsExactly("oom_skipped", "oom_skipped");
        assertThat(r.events()).extracting(AgentEvent::count).containsExactly(1L, 2L);
    }

    @Test
    void aRunWithoutSuchLinesAnnouncesNothing() throws IOException {
        Read r = read("musubi_issue477.log");
        assertThat(r.steps()).isNotEmpty();
        assertThat(r.events()).isEmpty();
    }
}
