package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TimeOrderedTest {

    private static TimeOrdered of(double... ts) {
        return new TimeOrdered() {
            @Override
            public int size() {
                return ts.length;
            }

            @Override
            public double ts(int i) {
                return ts[i];
            }
        };
    }

    @Test
    void findsTheFirstEntryAtOrAfterATime() {
        TimeOrdered series = of(10, 20, 20, 30);
        assertThat(series.firstIndexAtOrAfter(5)).isZero();
        assertThat(series.firstIndexAtOrAfter(20)).isEqualTo(1); // the first of equal stamps
        assertThat(series.firstIndexAtOrAfter(21)).isEqualTo(3);
        assertThat(series.firstIndexAtOrAfter(31)).isEqualTo(4); // none: size()
        assertThat(of().firstIndexAtOrAfter(0)).isZero();
    }
}
