package dev.trainwatch.estimator;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Per (GPU id, model family) correction factors learned from observed runs: predicted step time and peak memory
 * are multiplied by them. Absent pairs use 1.0. Immutable and thread-safe; {@link #with} returns a new instance.
 *
 * @param factors factors by key {@code gpuId + "/" + family}
 */
public record Calibration(Map<String, Factors> factors) {

    /** The neutral calibration: every factor 1.0. */
    public static final Calibration NONE = new Calibration(Map.of());

    public Calibration {
        factors = Map.copyOf(factors);
    }

    /**
     * Multipliers for one (GPU, family) pair.
     *
     * @param stepTimeFactor observed / predicted step time
     * @param memoryFactor   observed / predicted peak memory
     */
    public record Factors(double stepTimeFactor, double memoryFactor) {
        public static final Factors IDENTITY = new Factors(1.0, 1.0);

        public Factors {
            if (!(stepTimeFactor > 0) || !(memoryFactor > 0) || Double.isInfinite(stepTimeFactor)
                    || Double.isInfinite(memoryFactor)) {
                throw new IllegalArgumentException("calibration factors must be positive and finite, got "
                        + stepTimeFactor + " and " + memoryFactor);
            }
        }
    }

    /** A calibration equal to this one except for the factors of ({@code gpuId}, {@code family}). */
    public Calibration with(String gpuId, String family, Factors value) {
        Map<String, Factors> copy = new LinkedHashMap<>(factors);
        copy.put(key(gpuId, family), value);
        return new Calibration(copy);
    }

    /** The factors for a pair, {@link Factors#IDENTITY} when none were learned. */
    public Factors factorsFor(String gpuId, String family) {
        return factors.getOrDefault(key(gpuId, family), Factors.IDENTITY);
    }

    private static String key(String gpuId, String family) {
        return gpuId.toLowerCase(Locale.ROOT) + "/" + family.toLowerCase(Locale.ROOT);
    }
}
