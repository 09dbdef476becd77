package dev.trainwatch.protocol;

/**
 * How far a phase the log shows as a progress bar (caching latents, quantising, sampling) has got. Immutable.
 *
 * @param done      items done, as the bar shows them
 * @param total     the bar's total, or null when it shows none
 * @param perSecond items per second, as the bar shows them, or null before the bar knows its rate
 */
public record PhaseProgress(long done, Long total, Double perSecond) {
}
