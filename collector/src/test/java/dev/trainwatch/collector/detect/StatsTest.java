package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {
    @Test
    void medianOfOddEvenEmptyAndAPrefix() {
        assertThat(Stats.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(Stats.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThat(Stats.median(new double[0])).isNaN();
        // Only the first n values count; the array is not reordered.
        double[] values = {5, 1, 9, 100, 100};
        assertThat(Stats.median(values, 3)).isEqualTo(5);
        assertThat(values).containsExactly(5, 1, 9, 100, 100);
        assertThat(Stats.median(List.of(0.8, 1.2, 1.0))).isEqualTo(1.0);
    }

    @Test
    void aLineThroughUnixTimesKeepsItsPrecision() {
        Stats.LeastSquares fit = new Stats.LeastSquares();
        double t0 = 1_764_000_000.0;
        for (int i = 0; i < 60; i++) {
            fit.add(t0 + i, 40e9 + 5e6 * i); // 5 MB a second
        }
        fit.add(Double.NaN, 1); // left out
        assertThat(fit.count()).isEqualTo(60);
        assertThat(fit.slope()).isCloseTo(5e6, within(1e-3));
        assertThat(fit.intercept() + fit.slope() * t0).isCloseTo(40e9, within(1.0));
        assertThat(fit.r2()).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void noLineWithFewerThanThreePointsOrNoSpread() {
        Stats.LeastSquares two = new Stats.LeastSquares();
        two.add(1, 1);
        two.add(2, 2);
        assertThat(two.slope()).isNaN();
        assertThat(two.intercept()).isNaN();
        Stats.LeastSquares sameX = new Stats.LeastSquares();
        for (int i = 0; i < 5; i++) {
            sameX.add(7, i);
        }
        assertThat(sameX.slope()).isNaN();
        Stats.LeastSquares flat = new Stats.LeastSquares();
        for (int i = 0; i < 5; i++) {
            flat.add(i, 3);
        }
        assertThat(flat.slope()).isZero();
        assertThat(flat.r2()).isZero();
    }
}
