package dev.trainwatch.collector.state;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.protocol.RunSpec;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What the collector needs from the estimator, named after the caller's need so tests can use a small
 * hand-written double. Implementations must be thread-safe.
 */
public interface Predictor {

    /** Prices a run; throws {@link InvalidSpecException} (one line for the user) when it cannot. */
    Estimate estimate(RunSpec spec);

    /** Prices an observed run with a change ({@link Estimator#reprice}); empty when this predictor cannot. */
    default Optional<Repricing> reprice(ObservedRun observed, RunSpec target) {
        return Optional.empty();
    }

    /** The catalog GPU id for an NVML device name ("NVIDIA A100-SXM4-80GB" → "a100-80gb"), when known. */
    default Optional<String> resolveGpuId(String deviceName) {
        return Optional.empty();
    }

    /** Pixels per latent cell of a model's autoencoder (8 for SD/SDXL VAE, 32 for DC-AE), when known. */
    default OptionalInt latentDownsample(String modelId) {
        return OptionalInt.empty();
    }

    /** The production predictor over the bundled catalogs. */
    static Predictor of(Estimator estimator) {
        return new EstimatorPredictor(estimator);
    }
}
