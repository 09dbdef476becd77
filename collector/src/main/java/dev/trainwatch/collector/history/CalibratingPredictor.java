package dev.trainwatch.collector.history;

import dev.trainwatch.collector.state.EstimatorPredictor;
import dev.trainwatch.estimator.Calibration;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import java.util.Optional;

/**
 * The collector's predictor: the bundled estimator, calibrated by what finished runs showed. Recalibration swaps an
 * immutable estimator, so a prediction sees the old or the new factors, never a mix. Thread-safe.
 */
public final class CalibratingPredictor extends EstimatorPredictor {
    private volatile Estimator calibrated;

    public CalibratingPredictor(Estimator estimator) {
        super(estimator.withCalibration(Calibration.NONE));
        this.calibrated = this.estimator;
    }

    private volatile List<CalibrationFactors> factors = List.of();

    /** The model family (the calibration's grouping), if the catalog knows the model. */
    public Optional<String> familyOf(String modelId) {
        return estimator.catalog().model(modelId).map(m -> m.family());
    }

    /** The factors last applied, with the runs behind each (applied or not yet). */
    public List<CalibrationFactors> factors() {
        return factors;
    }

    public void recalibrate(List<CalibrationFactors> factors) {
        this.factors = List.copyOf(factors);
        Calibration calibration = Calibration.NONE;
        for (CalibrationFactors f : factors) {
            calibration = calibration.with(f.gpuId(), f.family(),
                    new Calibration.Factors(f.stepTimeFactor(), f.memoryFactor()));
        }
        calibrated = estimator.withCalibration(calibration);
    }

    @Override
    protected Estimator pricing() {
        return calibrated;
    }

    /** The uncalibrated prediction, with its calibration key; empty when the spec cannot be priced. */
    public Optional<HistoryRecorder.RawPrediction> rawPrediction(RunSpec spec) {
        try {
            Estimate estimate = estimator.estimate(spec);
            return estimator.catalog().model(estimate.model()).map(model -> new HistoryRecorder.RawPrediction(
                    estimate.gpu(), model.family(), estimate.stepSeconds(), estimate.peakMemoryBytes()));
        } catch (InvalidSpecException e) {
            return Optional.empty();
        }
    }
}
