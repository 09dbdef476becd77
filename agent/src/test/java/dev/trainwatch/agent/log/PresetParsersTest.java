package dev.trainwatch.agent.log;

import static dev.trainwatch.agent.log.Fixtures.at;
import static dev.trainwatch.agent.log.Fixtures.unix;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each preset on a captured log in its codebase's exact format (the f-strings of the training scripts, with
 * their logger prefixes, warnings, tracebacks, colour codes and progress bars around them), read through the
 * production {@link LogTailer}.
 */
class PresetParsersTest {

    @TempDir
    Path dir;

    @Test
    void pixartSigmaStepsWithBucketsAndRescaledEpochStart() throws Exception {
        List<StepEvent> events = Fixtures.read(dir, "pixart-sigma.log", "pixart");

        // The run's first line (step 1) divides one step's time by log_interval: unusable, dropped.
        assertThat(events).extracting(StepEvent::step).startsWith(20L, 40L, 60L, 71L, 90L).doesNotContain(1L);
        StepEvent s40 = at(events, 40);
        assertThat(s40.timeS()).isCloseTo(1.754, within(1e-9));
        assertThat(s40.dataTimeS()).isCloseTo(0.610, within(1e-9));
        assertThat(s40.lr()).isCloseTo(8.0e-7, within(1e-15));
        assertThat(s40.loss()).isCloseTo(0.1552, within(1e-9));
        assertThat(s40.gradNorm()).isCloseTo(0.5495, within(1e-9));
        assertThat(s40.bucketHeight()).isEqualTo(128);
        assertThat(s40.bucketWidth()).isEqualTo(128);
        assertThat(s40.intervalSteps()).isEqualTo(20);
        assertThat(s40.ts()).isCloseTo(unix("2024-05-14T09:15:12.307Z"), within(1e-6));
        assertThat(at(events, 60).bucketHeight()).isEqualTo(112);
        assertThat(at(events, 60).bucketWidth()).isEqualTo(144);

        // Epoch 2 starts with a line at local step 1 covering 11 steps, divided by 20 by the script.
        StepEvent s71 = at(events, 71);
        assertThat(s71.intervalSteps()).isEqualTo(11);
        assertThat(s71.timeS()).isCloseTo(0.961 * 20 / 11, within(1e-9));
        assertThat(s71.dataTimeS()).isCloseTo(0.336 * 20 / 11, within(1e-9));
        assertThat(at(events, 90).intervalSteps()).isEqualTo(19);
        assertThat(at(events, 90).timeS()).isCloseTo(1.706 * 20 / 19, within(1e-9));
    }

    @Test
    void pixartAlphaVariantWithoutBucketAndWithoutSpaceBeforeIt() {
        StepLineParser p = StepLineParsers.forFormat("pixart");
        StepEvent e = p.parse("2023-11-02 03:11:54,102 - PixArt - INFO - Step/Epoch [2400/3][600/1250]:total_eta: "
                + "1 day, 2:03:04, epoch_eta:0:22:31, time_all:2.163, time_data:0.017, lr:2.000e-05, "
                + "loss:0.1378, grad_norm:0.0911");
        assertThat(e.step()).isEqualTo(2400);
        assertThat(e.timeS()).isEqualTo(2.163);
        assertThat(e.bucketHeight()).isNull();
        assertThat(e.loss()).isEqualTo(0.1378);
        StepEvent f = p.parse("Step/Epoch [2420/3][620/1250]:total_eta: 1 day, 2:02:30, epoch_eta:0:21:50, "
                + "time_all:2.170, time_data:0.016, lr:2.000e-05,s:(64, 64), loss:0.1402, grad_norm:0.0870");
        assertThat(f.bucketHeight()).isEqualTo(64);
        assertThat(f.intervalSteps()).isEqualTo(20);
        assertThat(f.loss()).isEqualTo(0.1402);
        assertThat(f.gradNorm()).isEqualTo(0.0870);
    }

    @Test
    void sanaSplitsModelDataLmVaeAndToleratesTheMissingSeparator() throws Exception {
        List<StepEvent> events = Fixtures.read(dir, "sana.log", "sana");

        assertThat(events).extracting(StepEvent::step).containsExactly(20L, 40L, 60L, 80L, 100L, 120L, 140L, 160L,
                180L, 200L);
        StepEvent s200 = at(events, 200);
        assertThat(s200.timeS()).isCloseTo(1.818, within(1e-9));
        assertThat(s200.modelTimeS()).isCloseTo(1.510, within(1e-9));
        assertThat(s200.dataTimeS()).isCloseTo(0.014, within(1e-9));
        assertThat(s200.lmTimeS()).isCloseTo(0.178, within(1e-9));
        assertThat(s200.vaeTimeS()).isCloseTo(0.139, within(1e-9));
        assertThat(s200.lr()).isCloseTo(1.0e-4, within(1e-12));
        assertThat(s200.bucketHeight()).isEqualTo(32);
        assertThat(s200.bucketWidth()).isEqualTo(32);
        assertThat(s200.loss()).isCloseTo(0.5588, within(1e-9));
        assertThat(s200.gradNorm()).isCloseTo(0.0668, within(1e-9));
        assertThat(s200.intervalSteps()).isEqualTo(20);
        assertThat(s200.ts()).isCloseTo(unix("2024-11-20T14:08:52.933Z"), within(1e-6));
    }

    @Test
    void sanaWithSeparatorAndCaptionInTheMiddle() {
        StepEvent e = StepLineParsers.forFormat("sana").parse("Epoch: 2 | Global Step: 46900 | Local Step: 26 // "
                + "23437, total_eta: 4 days, 1:00:10, epoch_eta:12:01:00, time: all:1.901, model:1.522, data:0.031, "
                + "lm:0.180, vae:0.141, lr:5.000e-05, Cap: a photo of a cat, loss:0.9 and more, s:(48, 32), "
                + "loss:0.4413, grad_norm:0.0690");
        assertThat(e.step()).isEqualTo(46900);
        assertThat(e.bucketHeight()).isEqualTo(48);
        assertThat(e.bucketWidth()).isEqualTo(32);
        assertThat(e.loss()).isEqualTo(0.4413);
        assertThat(e.lr()).isEqualTo(5.0e-5);
    }

    @Test
    void ditThroughputBecomesStepTime() throws Exception {
        List<StepEvent> events = Fixtures.read(dir, "dit.log", "dit");

        assertThat(events).extracting(StepEvent::step).containsExactly(100L, 200L, 300L, 400L, 500L, 600L, 700L,
                800L, 900L, 1000L);
        StepEvent s200 = at(events, 200);
        assertThat(s200.timeS()).isCloseTo(1 / 2.84, within(1e-9));
        assertThat(s200.loss()).isCloseTo(0.1830, within(1e-9));
        assertThat(s200.intervalSteps()).isEqualTo(100);
        // The coloured "[\e[34m2023-01-12 18:39:26\e[0m]" prefix gives the time.
        assertThat(s200.ts()).isCloseTo(unix("2023-01-12T18:39:26Z"), within(1e-6));
        assertThat(at(events, 100).intervalSteps()).isNull();
    }

    @Test
    void openSoraTimerLinesPerRankWithGlobalSteps() throws Exception {
        List<StepEvent> events = Fixtures.read(dir, "opensora.log", "opensora");

        // Four steps, two ranks each; the bar's coarser reports are ignored once timer lines exist, except the
        // very first bar frame (step 1) which arrives before the first timer line on the same line.
        List<StepEvent> rank0 = events.stream().filter(e -> Integer.valueOf(0).equals(e.rank())).toList();
        List<StepEvent> rank1 = events.stream().filter(e -> Integer.valueOf(1).equals(e.rank())).toList();
        assertThat(rank0).extracting(StepEvent::step).containsExactly(1L, 2L, 3L, 4L);
        assertThat(rank1).extracting(StepEvent::step).containsExactly(1L, 2L, 3L, 4L);
        StepEvent r0s2 = rank0.get(1);
        assertThat(r0s2.dataTimeS()).isCloseTo(0.00, within(1e-9));
        assertThat(r0s2.vaeTimeS()).isCloseTo(1.97, within(1e-9));
        assertThat(r0s2.lmTimeS()).isCloseTo(0.33, within(1e-9));
        assertThat(r0s2.modelTimeS()).isCloseTo(0.52 + 1.04 + 0.04 + 0.02, within(1e-9));
        assertThat(r0s2.timeS()).isCloseTo(0.00 + 3.96 + 0.00 + 0.00, within(1e-9));
        assertThat(r0s2.intervalSteps()).isEqualTo(1);
        assertThat(rank1.get(0).dataTimeS()).isCloseTo(0.01, within(1e-9));
        assertThat(rank1.get(0).timeS()).isCloseTo(0.01 + 3.97, within(1e-9));
    }

    @Test
    void openSoraLaterEpochsUseStepsPerEpoch() {
        StepLineParser p = StepLineParsers.forFormat("opensora");
        assertThat(p.parse("[2025-03-18 10:20:43] Training for 1000 epochs with 2441 steps per epoch")).isNull();
        StepEvent e = p.parse("Rank 3 | Epoch 2 | Step 9 | load_data: 0.42 s | iter: 3.90 s | encode_video: 1.95 s | "
                + "encode_text: 0.31 s | forward-backward: 1.50 s | optim: 0.05 s | clean_cache: 0.00 s | "
                + "checkpoint: 0.00 s | ");
        assertThat(e.step()).isEqualTo(2 * 2441 + 10);
        assertThat(e.rank()).isEqualTo(3);
        assertThat(e.dataTimeS()).isEqualTo(0.42);
        assertThat(e.modelTimeS()).isCloseTo(1.55, within(1e-9));
        assertThat(e.timeS()).isCloseTo(4.32, within(1e-9));
    }

    @Test
    void openSoraBarWithoutTimers() {
        StepLineParser p = StepLineParsers.forFormat("opensora");
        StepEvent e = p.parse("Epoch 1:  10%|█         | 250/2441 [12:31<1:49:40,  3.00s/it, loss=0.612, "
                + "global_grad_norm=0.981, step=249, global_step=2690, lr=1e-5]");
        assertThat(e.step()).isEqualTo(2441 + 250);
        assertThat(e.timeS()).isEqualTo(3.00);
        assertThat(e.loss()).isEqualTo(0.612);
        assertThat(e.gradNorm()).isEqualTo(0.981);
        assertThat(e.lr()).isEqualTo(1e-5);
        // A redraw of the same position is not a new step.
        assertThat(p.parse("Epoch 1:  10%|█         | 250/2441 [12:32<1:49:41,  3.01s/it, loss=0.612, "
                + "global_grad_norm=0.981, step=249, global_step=2690, lr=1e-5]")).isNull();
    }

    @Test
    void accelerateBarsInBothRateUnitsAmidCarriageReturnsAndOtherBars() throws Exception {
        List<StepEvent> events = Fixtures.read(dir, "accelerate.log", "accelerate");

        // "Loading checkpoint shards" bars are not training; the redrawn frame of step 6 counts once; the last
        // frame (21) is still being drawn — no \r or \n after it yet — so it waits (see LogTailerTest).
        assertThat(events).extracting(StepEvent::step).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L,
                11L, 12L, 20L);
        assertThat(at(events, 1).timeS()).isCloseTo(2.41, within(1e-9));
        assertThat(at(events, 1).loss()).isCloseTo(0.0654, within(1e-9));
        assertThat(at(events, 1).lr()).isCloseTo(1e-5, within(1e-15));
        assertThat(at(events, 20).timeS()).isCloseTo(1 / 1.46, within(1e-9));
        assertThat(at(events, 20).intervalSteps()).isEqualTo(8);
        assertThat(at(events, 2).intervalSteps()).isEqualTo(1);
        // Bars carry no timestamp: the read time stands in.
        assertThat(at(events, 5).ts()).isEqualTo(Fixtures.NOW.getEpochSecond());
    }

    @Test
    void autoDetectsEachPresetAndAgreesWithIt() throws Exception {
        for (String[] c : new String[][] {{"pixart-sigma.log", "pixart"}, {"sana.log", "sana"}, {"dit.log", "dit"},
                {"opensora.log", "opensora"}, {"accelerate.log", "accelerate"}}) {
            List<StepEvent> explicit = Fixtures.read(dir, c[0], c[1]);
            List<StepEvent> auto = Fixtures.read(dir, c[0], "auto");
            assertThat(auto).as(c[0]).isEqualTo(explicit).isNotEmpty();
        }
    }

    @Test
    void nothingMatchesInNoise() {
        for (String preset : StepLineParsers.PRESETS) {
            StepLineParser p = StepLineParsers.forFormat(preset);
            for (String line : new String[] {"", "Traceback (most recent call last):",
                    "    info = f\"Step/Epoch [{global_step}/{epoch}][{step + 1}/{len(train_dataloader)}]:total_eta: "
                            + "{eta}, time_all:{t:.3f}\"",
                    "(step=) Train Loss: nan, Train Steps/Sec: ", "Global Step: x | all:",
                    "Rank | Epoch | Step |", "100%|██████████| 2/2 [00:03<00:00,  1.52s/it]",
                    "Steps: [12/100 s/it]", "time_all:1.0 without a head"}) {
                assertThat(p.parse(line)).as(preset + ": " + line).isNull();
            }
        }
    }
}
