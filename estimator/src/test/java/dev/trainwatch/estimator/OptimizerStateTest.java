package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OptimizerStateTest {

    @Test
    void adamwKeepsTwoFp32MomentsPerElement() {
        assertThat(OptimizerState.bytes("adamw", new long[] {1152, 1152})).isEqualTo(8L * 1152 * 1152);
    }

    @Test
    void cameFactorsMatricesButNotPointwiseConvs() {
        long o = 5600;
        long i = 2240;
        // 2-D: exp_avg (4 B/elem) + row and column factors of the second moment and the residual.
        assertThat(OptimizerState.bytes("came", new long[] {o, i})).isEqualTo(4 * o * i + 2 * 4 * (o + i));
        // 4-D [O, I, 1, 1]: factoring the last two dims leaves rows = O*I and columns = O*I -> 20 B/elem.
        assertThat(OptimizerState.bytes("came", new long[] {o, i, 1, 1})).isEqualTo(4 * o * i + 2 * 4 * (o * i + o * i));
        // Vectors keep exp_avg and a full exp_avg_sq.
        assertThat(OptimizerState.bytes("came", new long[] {1152})).isEqualTo(8L * 1152);
    }

    @Test
    void eightBitAdamKeepsSmallTensorsIn32Bit() {
        assertThat(OptimizerState.bytes("adamw8bit", new long[] {1152})).isEqualTo(8L * 1152);
        long n = 1152L * 1152;
        assertThat(OptimizerState.bytes("adamw8bit", new long[] {1152, 1152})).isEqualTo(2 * n + 8 * 648); // 1152^2 / 2048 = 648 blocks, one fp32 absmax per moment
    }

    @Test
    void adafactorIsNearlyFreeOnMatricesAndSgdKeepsMomentum() {
        assertThat(OptimizerState.bytes("adafactor", new long[] {1000, 500})).isEqualTo(4L * (1000 + 500));
        assertThat(OptimizerState.bytes("adafactor", new long[] {1000, 500, 1, 1})).isEqualTo(4L * 2 * 500_000);
        assertThat(OptimizerState.bytes("sgd", new long[] {1000, 500})).isEqualTo(4L * 500_000);
    }

    @Test
    void eightBitCameQuantisesItsLargeStates() {
        long[] shape = {5600, 2240, 1, 1};
        assertThat(OptimizerState.bytes("came8bit", shape)).isLessThan(OptimizerState.bytes("came", shape) / 3);
    }

    @Test
    void optimizerNamesFromConfigsAreUnderstood() {
        assertThat(OptimizerState.normalize("CAMEWrapper")).isEqualTo("came");
        assertThat(OptimizerState.normalize("AdamW")).isEqualTo("adamw");
        assertThat(OptimizerState.normalize("CAME8BitWrapper")).isEqualTo("came8bit");
        assertThat(OptimizerState.normalize("Lion8bit")).isEqualTo("lion8bit");
        assertThat(OptimizerState.normalize("prodigy")).isEqualTo("prodigy");
        assertThat(OptimizerState.normalize("Lion")).isEqualTo("lion");
        assertThat(OptimizerState.normalize("Sophia")).isNull();
    }

    @Test
    void prodigyKeepsFourStatesAndLionOne() {
        // prodigyopt: exp_avg, exp_avg_sq, s and p0; Lion: exp_avg only; bitsandbytes Lion8bit: that one at 1 byte.
        long[] shape = {3072, 3072};
        long n = 3072L * 3072;
        assertThat(OptimizerState.bytes("prodigy", shape)).isEqualTo(16 * n);
        assertThat(OptimizerState.bytes("lion", shape)).isEqualTo(4 * n);
        assertThat(OptimizerState.bytes("lion8bit", shape)).isBetween(n, n + n / 100);
        assertThat(OptimizerState.bytes("lion8bit", new long[] {3072})).isEqualTo(4 * 3072);
    }
}
