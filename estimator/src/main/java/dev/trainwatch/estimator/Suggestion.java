package dev.trainwatch.estimator;

/**
 * One single change to a run spec and what it would do.
 *
 * @param change              what to change, in words a user can act on
 * @param savesBytes          peak memory saved (negative when the change costs memory)
 * @param newPeakMemoryBytes  the peak after the change
 * @param newStepSeconds      the step time after the change
 */
public record Suggestion(String change, long savesBytes, long newPeakMemoryBytes, double newStepSeconds) {
}
