package dev.trainwatch.collector.state;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalInt;

/** {@link Predictor} backed by the real {@link Estimator}. Thread-safe (the estimator is). */
final class EstimatorPredictor implements Predictor {

    private final Estimator estimator;

    EstimatorPredictor(Estimator estimator) {
        this.estimator = Objects.requireNonNull(estimator, "estimator");
    }

    @Override
    public Estimate estimate(RunSpec spec) {
        return estimator.estimate(spec);
    }

    @Override
    public OptionalInt latentDownsample(String modelId) {
        // Until the estimator exposes its autoencoder catalog: Sana uses the f32 DC-AE; DiT, PixArt and
        // Open-Sora's image latents use f8 VAEs.
        if (modelId == null) {
            return OptionalInt.empty();
        }
        String id = modelId.toLowerCase(Locale.ROOT);
        return OptionalInt.of(id.startsWith("sana") ? 32 : 8);
    }
}
