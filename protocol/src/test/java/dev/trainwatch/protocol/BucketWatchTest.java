package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A multi-scale bucket larger than any before is news once; smaller, equal or missing buckets are not. */
class BucketWatchTest {

    static StepEvent bucket(Integer h, Integer w) {
        return new StepEvent(1L, 2.0, 0.1, null, null, null, 5, null, 0.5, 1e-4, 0.1, h, w, null, 0.0, null);
    }

    @Test
    void onlyALargerAreaIsNews() {
        BucketWatch watch = new BucketWatch();
        assertThat(watch.read(List.of())).isFalse();
        assertThat(watch.read(List.of(bucket(null, null)))).isFalse();
        // The buckets of a real Sana multi-scale log (issue 206, shared corpus): (20, 50), then (26, 36), (28, 34).
        assertThat(watch.read(List.of(bucket(20, 50)))).isTrue(); // the first one seen
        assertThat(watch.read(List.of(bucket(26, 36)))).isFalse();
        assertThat(watch.read(List.of(bucket(28, 34)))).isFalse();
        assertThat(watch.read(List.of(bucket(50, 20)))).isFalse(); // the same area turned
        assertThat(watch.read(List.of(bucket(26, 36), bucket(32, 32)))).isTrue();
        assertThat(watch.read(List.of(bucket(32, 32)))).isFalse();
        assertThat(watch.read(List.of(bucket(0, 64), bucket(-1, 64)))).isFalse();
        // PixArt's bucket-oom case: 128x128 latents, then 128x256 (a 1024x2048 px image).
        BucketWatch pixart = new BucketWatch();
        assertThat(pixart.read(List.of(bucket(128, 128)))).isTrue();
        assertThat(pixart.read(List.of(bucket(128, 128)))).isFalse();
        assertThat(pixart.read(List.of(bucket(128, 256)))).isTrue();
    }
}
