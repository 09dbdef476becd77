package dev.trainwatch.agent.ship;

import java.time.Duration;

/** Waits; injected so tests of retries do not wait for real. */
@FunctionalInterface
public interface Sleeper {

    void sleep(Duration duration) throws InterruptedException;

    /** Sleeps for real. */
    static Sleeper system() {
        return duration -> Thread.sleep(duration.toMillis());
    }
}
