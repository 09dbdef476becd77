package dev.trainwatch.collector.state;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.ObservedRun;
import dev.trainwatch.estimator.Repricing;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/** {@link Predictor} backed by the real {@link Estimator} and its catalogs. Thread-safe (the estimator is). */
public class EstimatorPredictor implements Predictor {

    /** The catalogs' own, uncalibrated estimator. */
    protected final Estimator estimator;

    protected EstimatorPredictor(Estimator estimator) {
        this.estimator = Objects.requireNonNull(estimator, "estimator");
    }

    /** The estimator that prices runs: the catalogs' own here, a calibrated one in a subclass. */
    protected Estimator pricing() {
        return estimator;
    }

    @Override
    public Estimate estimate(RunSpec spec) {
        return pricing().estimate(spec);
    }

    @Override
    public Optional<Repricing> reprice(ObservedRun observed, RunSpec target) {
        return Optional.of(pricing().reprice(observed, target));
    }

    @Override
    public Optional<String> resolveGpuId(String deviceName) {
        return deviceName == null ? Optional.empty() : estimator.catalog().resolveGpuId(deviceName);
    }

    @Override
    public OptionalInt latentDownsample(String modelId) {
        if (modelId == null) {
            return OptionalInt.empty();
        }
        return estimator.catalog().model(modelId).map(ModelInfo::latentDownsample).filter(f -> f > 0)
                .map(OptionalInt::of).orElse(OptionalInt.empty());
    }
}
