package dev.trainwatch.agent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void doublesUpToTheCapWithJitterBetweenHalfAndAll() {
        Backoff low = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30), () -> 0.0);
        Backoff high = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(30), () -> 0.999999);
        assertThat(low.delay(1)).isEqualTo(Duration.ofMillis(250));
        assertThat(high.delay(1)).isEqualTo(Duration.ofMillis(499));
        assertThat(low.delay(2)).isEqualTo(Duration.ofMillis(500));
        assertThat(low.delay(4)).isEqualTo(Duration.ofMillis(2000));
        assertThat(low.delay(7)).isEqualTo(Duration.ofMillis(15000));
        assertThat(low.delay(50)).isEqualTo(Duration.ofMillis(15000));
        assertThat(high.delay(1000)).isEqualTo(Duration.ofMillis(29999));
    }
}
