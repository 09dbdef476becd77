package dev.trainwatch.agent.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.protocol.StepEvent;
import org.junit.jupiter.api.Test;

/**
 * A diverged loss is a reading: every log format turns {@code nan}, {@code inf}, {@code -inf} (any case) in the
 * loss or grad norm into NaN or ±infinity, and finite losses are unchanged. A step time is never a NaN.
 */
class LossReadingsTest {

    @Test
    void pixartKeepsANanLossAndAnInfiniteGradNorm() {
        StepEvent e = StepLineParsers.forFormat("pixart").parse("2023-11-02 03:11:54,102 - PixArt - INFO - "
                + "Step/Epoch [2400/3][600/1250]:total_eta: 1 day, 2:03:04, epoch_eta:0:22:31, time_all:2.163, "
                + "time_data:0.017, lr:2.000e-05, loss:nan, grad_norm:inf");
        assertThat(e.step()).isEqualTo(2400);
        assertThat(e.loss()).isNaN();
        assertThat(e.gradNorm()).isInfinite().isPositive();
        assertThat(e.timeS()).isEqualTo(2.163);
    }

    @Test
    void sanaKeepsANanLoss() {
        StepEvent e = StepLineParsers.forFormat("sana").parse("Epoch: 2 | Global Step: 46900 | Local Step: 26 // "
                + "23437, total_eta: 4 days, 1:00:10, epoch_eta:12:01:00, time: all:1.901, model:1.522, data:0.031, "
                + "lm:0.180, vae:0.141, lr:5.000e-05, Cap: a photo of a cat, s:(48, 32), loss:NaN, grad_norm:-inf");
        assertThat(e.loss()).isNaN();
        assertThat(e.gradNorm()).isInfinite().isNegative();
        StepEvent fine = StepLineParsers.forFormat("sana").parse("Epoch: 2 | Global Step: 46920 | Local Step: 46 // "
                + "23437, total_eta: 4 days, 1:00:10, epoch_eta:12:01:00, time: all:1.901, model:1.522, data:0.031, "
                + "lm:0.180, vae:0.141, lr:5.000e-05, Cap: a photo of a cat, s:(48, 32), loss:0.4413, grad_norm:0.0690");
        assertThat(fine.loss()).isEqualTo(0.4413);
        assertThat(fine.gradNorm()).isEqualTo(0.0690);
    }

    @Test
    void ditKeepsANanLoss() {
        StepEvent e = StepLineParsers.forFormat("dit").parse("[\u001b[34m2024-01-05 10:11:12\u001b[0m] (step=0006100) "
                + "Train Loss: nan, Train Steps/Sec: 1.23");
        assertThat(e.step()).isEqualTo(6100);
        assertThat(e.loss()).isNaN();
        assertThat(e.timeS()).isCloseTo(1 / 1.23, org.assertj.core.api.Assertions.within(1e-9));
    }

    @Test
    void progressBarsKeepANanLoss() {
        StepEvent tqdm = StepLineParsers.forFormat("tqdm").parse(
                "Steps:   4%|▍         | 41/1000 [00:50<19:40,  1.24s/it, avr_loss=nan, lr=1e-05]");
        assertThat(tqdm.loss()).isNaN();
        StepEvent openSora = StepLineParsers.forFormat("opensora").parse("Epoch 1:  10%|█         | 250/2441 "
                + "[12:31<1:49:40,  3.00s/it, loss=inf, global_grad_norm=nan, step=249, global_step=2690, lr=1e-5]");
        assertThat(openSora.loss()).isInfinite();
        assertThat(openSora.gradNorm()).isNaN();
    }

    @Test
    void numbersThatAreNotReadingsStayAbsent() {
        assertThat(LineFields.readingAt("nanometer", 0)).isNull();
        assertThat(LineFields.readingAt("information", 0)).isNull();
        assertThat(LineFields.readingAt("0.25,", 0)).isEqualTo(0.25);
        assertThat(LineFields.readingAt(" Infinity", 0)).isInfinite();
        assertThat(LineFields.doubleAt("nan", 0)).isNull(); // a time or rate of nan is no time
    }
}
