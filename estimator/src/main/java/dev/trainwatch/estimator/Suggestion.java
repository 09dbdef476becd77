package dev.trainwatch.estimator;

import java.util.List;

/**
 * One way to change a run spec, and what it would do: a single change, the smallest combination of changes that
 * fits when no single change does, or a plan that adds GPUs (labelled by {@code addsGpus}).
 *
 * @param change              what to change, in words a user can act on, with the flags
 * @param savesBytes          peak memory saved (negative when the change costs memory)
 * @param newPeakMemoryBytes  the peak after the change
 * @param newStepSeconds      the step time after the change
 * @param plan                {@code single} (one change), {@code combination} (several together) or
 *                            {@code more_gpus} (adds GPUs)
 * @param changes             the {@code trainwatch estimate} flags of the change, one entry per change
 * @param addsGpus            GPUs the change adds to the run (0 when it keeps the user's GPU count)
 * @param fits                whether the changed run fits the GPU's memory
 * @param givesUp             what the change costs besides the numbers (null when nothing)
 */
public record Suggestion(String change, long savesBytes, long newPeakMemoryBytes, double newStepSeconds, String plan,
                         List<String> changes, int addsGpus, boolean fits, String givesUp) {

    /** Plan kinds. */
    public static final String SINGLE = "single";
    public static final String COMBINATION = "combination";
    public static final String MORE_GPUS = "more_gpus";

    public Suggestion {
        changes = changes == null ? List.of() : List.copyOf(changes);
    }
}
