package dev.trainwatch.estimator;

import dev.trainwatch.protocol.RunSpec;

/**
 * What was observed of a real run, the anchor for re-pricing it on other hardware ({@link Estimator#reprice}).
 * Immutable.
 *
 * @param spec           the run as it ran (its GPU, GPU count and per-GPU batch included)
 * @param stepSeconds    observed seconds per optimizer step (a median over steady steps)
 * @param dataSeconds    observed seconds per step spent waiting for data (the training log's data timer); null
 *                       when unknown, counted as none
 * @param encoderSeconds observed seconds per step in the online text encoder and VAE (Sana's {@code lm:}/{@code vae:}
 *                       timers); null when unknown: the encoders are then anchored with the rest of the step
 * @param stepsDone      the newest step seen, null when unknown
 * @param dataIncludesEncoders whether the data timer also holds the online encoders (PixArt's {@code time_data}
 *                       spans the loader, the VAE encode and the T5 encode when features are not precomputed);
 *                       only meaningful without {@code encoderSeconds}
 */
public record ObservedRun(RunSpec spec, double stepSeconds, Double dataSeconds, Double encoderSeconds, Long stepsDone,
                          boolean dataIncludesEncoders) {

    public ObservedRun {
        if (spec == null) {
            throw new InvalidSpecException("an observed run needs its spec");
        }
        if (!(stepSeconds > 0) || Double.isInfinite(stepSeconds)) {
            throw new InvalidSpecException("an observed step time must be above 0 seconds, got " + stepSeconds);
        }
        if (dataSeconds != null && !(dataSeconds >= 0 && dataSeconds < stepSeconds)) {
            throw new InvalidSpecException("observed data time must be between 0 and the step time, got " + dataSeconds);
        }
        if (encoderSeconds != null && !(encoderSeconds >= 0 && encoderSeconds < stepSeconds)) {
            throw new InvalidSpecException("observed encoder time must be between 0 and the step time, got " + encoderSeconds);
        }
    }
}
