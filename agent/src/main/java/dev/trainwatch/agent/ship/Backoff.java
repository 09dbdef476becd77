package dev.trainwatch.agent.ship;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/** Backoff with jitter: after the n-th failure, half to all of {@code min(max, initial * 2^(n-1))}. Thread-safe. */
public final class Backoff {

    private final Duration initial;
    private final Duration max;
    private final DoubleSupplier random;

    /**
     * @param initial the ceiling after the first failure
     * @param max     the largest ceiling
     * @param random  uniform numbers in [0, 1)
     */
    public Backoff(Duration initial, Duration max, DoubleSupplier random) {
        this.initial = initial;
        this.max = max;
        this.random = random;
    }

    /** The wait after {@code failures} consecutive failures (at least 1). */
    public Duration delay(int failures) {
        long ceiling = initial.toMillis();
        for (int i = 1; i < failures && ceiling < max.toMillis(); i++) {
            ceiling *= 2;
        }
        ceiling = Math.min(ceiling, max.toMillis());
        return Duration.ofMillis((long) (ceiling * (0.5 + 0.5 * random.getAsDouble())));
    }
}
