package dev.trainwatch.estimator;

import dev.trainwatch.protocol.RunSpec;

/**
 * Predicts what a run costs. Thread-safe; build one and share it.
 */
public final class Estimator {

    private Estimator() {
    }

    /** An estimator over the bundled model, encoder and GPU catalogs. */
    public static Estimator bundled() {
        return new Estimator();
    }

    /**
     * Prices a run.
     *
     * @throws InvalidSpecException for unknown ids or impossible values, with a one-line message
     */
    public Estimate estimate(RunSpec spec) {
        throw new InvalidSpecException("the estimator is not built yet");
    }
}
