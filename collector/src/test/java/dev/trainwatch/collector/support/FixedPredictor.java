package dev.trainwatch.collector.support;

import dev.trainwatch.collector.state.Predictor;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import java.util.Map;

/**
 * A predictor with fixed answers, so HTTP and metric tests do not move when the estimator's model is tuned. Knows
 * one model ({@code pixart-sigma-xl-2}) and one GPU ({@code a100-80gb}); anything else is refused like the real
 * estimator refuses an unknown id.
 */
public final class FixedPredictor implements Predictor {
    public static final String MODEL = "pixart-sigma-xl-2";
    public static final String GPU = "a100-80gb";
    public static final long PEAK_BYTES = 40L << 30;
    public static final long GPU_BYTES = 80L << 30;
    public static final double STEP_SECONDS = 1.25;

    @Override
    public Estimate estimate(RunSpec spec) {
        if (spec.model() != null && !spec.model().equals(MODEL)) {
            throw new InvalidSpecException("unknown model '" + spec.model() + "'; see 'trainwatch models'");
        }
        if (spec.gpu() != null && !spec.gpu().equals(GPU)) {
            throw new InvalidSpecException("unknown GPU '" + spec.gpu() + "'; see 'trainwatch gpus'");
        }
        int batch = spec.batch() == null ? 8 : spec.batch();
        int gpus = spec.gpus() == null ? 1 : spec.gpus();
        Double total = spec.totalSteps() == null ? null : spec.totalSteps() * STEP_SECONDS;
        return new Estimate(spec, MODEL, GPU, 611_000_000L, 611_000_000L, PEAK_BYTES, GPU_BYTES, true, 20,
                STEP_SECONDS, batch * gpus / STEP_SECONDS, Map.of("weights", 2_444_000_000L), Map.of("compute", 1.0),
                total, List.of(), List.of(), null);
    }

    @Override
    public java.util.Optional<String> resolveGpuId(String deviceName) {
        return deviceName != null && deviceName.contains("A100") ? java.util.Optional.of(GPU)
                : java.util.Optional.empty();
    }
}
