package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.testing.RequiredFixtures;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Checkpoint and evaluation announcements, in the words real training logs use, and the noise that is not one. */
class PhaseLinesTest {

    @TempDir
    Path dir;

    private static PhaseLines.Phase of(String line) {
        byte[] b = line.getBytes(StandardCharsets.UTF_8);
        return PhaseLines.of(null, b, 0, b.length, 1000.0, ZoneOffset.UTC);
    }

    @Test
    void announcementsAreRecognisedWithTheirTime() {
        assertThat(of("2025-03-18 12:11:18 - [Sana] - INFO - Running validation...").kind()).isEqualTo("evaluation");
        PhaseLines.Phase saved = of("[\u001b[34m2025-04-26 11:23:09\u001b[0m] Saved checkpoint to results/0006000.pt");
        assertThat(saved.kind()).isEqualTo("checkpoint_saved");
        assertThat(saved.ts()).isEqualTo(java.time.Instant.parse("2025-04-26T11:23:09Z").getEpochSecond());
        assertThat(of("11/24/2026 10:00:00 - INFO - accelerate.accelerator - Saving current state to out/checkpoint-500")
                .kind()).isEqualTo("checkpoint");
        assertThat(of("no timestamp: Saving checkpoint at step 2000").ts()).isEqualTo(1000.0);
        // The LoRA trainers' sampling is an evaluation phase: ai-toolkit issue #216's title quotes its log line.
        assertThat(of("Generating baseline samples before training").kind()).isEqualTo("evaluation");
        assertThat(of("Generating Images:  50%|#####     | 1/2 [01:00<01:00, 60.18s/it]").kind()).isEqualTo("evaluation");
        assertThat(of("Generating a report of the losses")).isNull();
        // The LoRA trainers' start-up phases (real lines: ai-toolkit #872 and #387, AI-Toolkit-Easy-Install #55,
        // SimpleTuner #653's log record).
        assertThat(of("Quantizing Transformer 1").kind()).isEqualTo("quantizing");
        assertThat(of(" - quantizing 40 transformer blocks").kind()).isEqualTo("quantizing");
        assertThat(of("Caching text embeddings to disk:  88%|########8 | 23/26 [51:34<06:44, 134.77s/it]").kind())
                .isEqualTo("caching");
        assertThat(of("2024-08-05 21:25:46,727 [INFO] (DataBackendFactory) (id=pseudo-camera-10k-flux) Creating VAE "
                + "latent cache.").kind()).isEqualTo("caching");
        assertThat(of("cache_latents: true")).isNull();
        assertThat(of("quantize: true")).isNull();
        PhaseLines.Phase shards = of("Loading checkpoint shards: 100%|██████████| 2/2 [00:12<00:00,  6.28s/it]");
        assertThat(shards.kind()).isEqualTo("loading");
        assertThat(shards.progress()).isEqualTo(new PhaseProgress(2, 2L, 1 / 6.28));
        assertThat(of("Caching text embeddings to disk:  88%|########8 | 23/26 [51:34<06:44, ?it/s]").progress())
                .isEqualTo(new PhaseProgress(23, 26L, null));
        assertThat(of("2024-08-16 10:58:26 INFO     loaded model: <All keys matched>")).isNull();    }

    @Test
    void ordinaryLinesAreNotPhases() {
        assertThat(of("Step/Epoch [2400/3][600/1250]: time_all:2.163, loss:0.1378")).isNull();
        assertThat(of("validation_prompts: ['a cat']")).isNull();
        assertThat(of("gradient_checkpointing: true")).isNull();
    }

    @Test
    void theTailerReportsThePhasesOfARealSanaLog() throws Exception {
        Path corpus = RequiredFixtures.corpusLog("sana_issue206_validation.txt");
        Path log = dir.resolve("train_log.log");
        Files.copy(corpus, log);
        try (LogTailer tailer = LogTailer.open(log, "sana", Clock.systemUTC(), Long.MAX_VALUE,
                LogTailer.LineTime.READ)) {
            assertThat(tailer.poll()).hasSize(3);
            // "Running validation...", then one finished 19/19 sampling bar per image: the first is the progress,
            // the nine alike after it within ten seconds say nothing new.
            List<AgentEvent> events = tailer.drainEvents();
            assertThat(events).extracting(AgentEvent::message).containsExactly("evaluation", "evaluation");
            assertThat(events.get(1).progress()).isEqualTo(new PhaseProgress(19, 19L, 24.03));
            assertThat(tailer.drainEvents()).isEmpty();
        }
    }
}
