package dev.trainwatch.estimator;

import java.util.List;
import java.util.Map;

/**
 * An observed run priced on other hardware: each operation of the target's step as the estimator prices it, times
 * what the observation says the estimator misses on the source (the anchor), plus the observed data wait scaled to
 * the target's per-GPU batch. Immutable.
 *
 * @param source             the estimate of the run as it ran
 * @param target             the estimate of the run on the target hardware (not anchored)
 * @param observedStepSeconds what the run took per step
 * @param modelAnchor        observed / predicted seconds of the GPU work outside the online encoders, on the source
 * @param encoderAnchor      the same for the online encoders (their own timers when observed, else the model anchor)
 * @param stepSeconds        the anchored step time on the target
 * @param stepOperations     anchored seconds per operation on the target, plus {@code data_wait}
 * @param samplesPerSecond   on the target, over all its GPUs
 * @param totalSeconds       the whole run on the target (with {@code total_steps}), null when unknown
 * @param remainingSeconds   what is left of it after the observed run's last step, null when unknown
 * @param notes              how the anchor was built, in words
 */
public record Repricing(Estimate source, Estimate target, double observedStepSeconds, double modelAnchor,
        double encoderAnchor, double stepSeconds, Map<String, Double> stepOperations, double samplesPerSecond,
        Double totalSeconds, Double remainingSeconds, List<String> notes) {
}
