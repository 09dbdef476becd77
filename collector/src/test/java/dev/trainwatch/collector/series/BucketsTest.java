package dev.trainwatch.collector.series;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BucketsTest {

    @Test
    void fewEntriesAreOneGroupEach() {
        assertThat(Buckets.split(4, i -> i, 10)).containsExactly(0, 1, 2, 3, 4);
        assertThat(Buckets.split(0, i -> i, 10)).containsExactly(0);
    }

    @Test
    void manyEntriesAreBoundedAndFirstAndLastStandAlone() {
        for (int n : new int[] {11, 100, 601, 10_000}) {
            for (int max : new int[] {3, 10, 50, 600}) {
                int[] bounds = Buckets.split(n, i -> i * 0.7, max);
                assertThat(bounds.length - 1).as("groups for n=%d max=%d", n, max).isLessThanOrEqualTo(Math.min(n, max));
                assertThat(bounds[0]).isZero();
                assertThat(bounds[1]).as("first entry alone").isEqualTo(1);
                assertThat(bounds[bounds.length - 2]).as("last entry alone").isEqualTo(n - 1);
                assertThat(bounds[bounds.length - 1]).isEqualTo(n);
                for (int k = 1; k < bounds.length; k++) {
                    assertThat(bounds[k]).as("groups are not empty").isGreaterThan(bounds[k - 1]);
                }
            }
        }
    }

    @Test
    void groupsSpanEqualTimeNotEqualCounts() {
        // 90 entries in the first second, 10 spread over the next 90 s: the burst shares few groups.
        int[] bounds = Buckets.split(100, i -> i < 90 ? i / 90.0 : (i - 89) * 10.0, 12);
        int groupsInBurst = 0;
        for (int k = 0; k + 1 < bounds.length; k++) {
            if (bounds[k] < 90) {
                groupsInBurst++;
            }
        }
        assertThat(groupsInBurst).isLessThanOrEqualTo(3);
        assertThat(bounds.length - 1).isGreaterThanOrEqualTo(10);
    }

    @Test
    void equalTimesMakeOneMiddleGroup() {
        assertThat(Buckets.split(20, i -> 5.0, 10)).containsExactly(0, 1, 19, 20);
    }

    @Test
    void fewerThanThreePointsCannotKeepFirstAndLast() {
        assertThatThrownBy(() -> Buckets.split(20, i -> i, 2)).isInstanceOf(IllegalArgumentException.class);
    }
}
