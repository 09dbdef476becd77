package dev.trainwatch.collector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ScrapeWarmUpTest {

    /** The warm-up's fleet takes its made-up batches (decoded as the HTTP edge does) and scrapes them. */
    @Test
    void theWarmUpFleetIsFedAndScraped() throws Exception {
        int size = ScrapeWarmUp.run(3);
        assertThat(size).as("bytes of the last two scrapes").isGreaterThan(10_000);
    }

    /** It runs on a daemon thread of its own and ends by itself. */
    @Test
    void theWarmUpEndsOnItsOwn() throws Exception {
        Thread thread = ScrapeWarmUp.startInBackground(5);
        assertThat(thread.isDaemon()).isTrue();
        thread.join(120_000);
        assertThat(thread.isAlive()).isFalse();
    }
}
