package dev.trainwatch.protocol;

import java.util.List;

/**
 * One step report of a run, from its log (parsed by the agent) or pushed by the training script
 * ({@code POST /v1/runs/{run_id}/steps}). Times are seconds per step; when {@code intervalSteps} &gt; 1 they are
 * the mean over that many steps ending at {@code step}. Immutable.
 *
 * @param step          global step number
 * @param timeS         wall seconds per step
 * @param dataTimeS     seconds per step spent waiting for data (PixArt: includes online VAE/T5 encoding)
 * @param modelTimeS    seconds per step in forward/backward/optimizer (Sana's split)
 * @param lmTimeS       seconds per step in the text encoder (Sana's split)
 * @param vaeTimeS      seconds per step in the VAE encoder (Sana's split)
 * @param intervalSteps how many steps the times average over
 * @param samples       samples processed per step across all ranks, when known
 * @param bucketHeight  latent height of the multi-scale bucket (PixArt/Sana {@code s:(h, w)})
 * @param bucketWidth   latent width of the multi-scale bucket
 * @param rank          the rank that logged it, when known
 * @param ts            unix seconds when the step ended
 * @param source        where the report was read, when the agent read it from a log: an id of the log file and of
 *                      the run's stretch in it (a new run appended to the same file, or a step counter that goes
 *                      back, is a new stretch), the same after an agent restart. Within one source a rank's steps
 *                      only go up, so the collector counts a step of (run, source, rank) once, whatever is re-read,
 *                      re-sent or replayed. Null for steps pushed by a script.
 */
public record StepEvent(
        Long step,
        Double timeS,
        Double dataTimeS,
        Double modelTimeS,
        Double lmTimeS,
        Double vaeTimeS,
        Integer intervalSteps,
        Double samples,
        Double loss,
        Double lr,
        Double gradNorm,
        Integer bucketHeight,
        Integer bucketWidth,
        Integer rank,
        Double ts,
        String source) {

    public StepEvent withTs(Double newTs) {
        return new StepEvent(step, timeS, dataTimeS, modelTimeS, lmTimeS, vaeTimeS, intervalSteps, samples, loss, lr,
                gradNorm, bucketHeight, bucketWidth, rank, newTs, source);
    }

    public StepEvent withIntervalSteps(Integer steps) {
        return new StepEvent(step, timeS, dataTimeS, modelTimeS, lmTimeS, vaeTimeS, steps, samples, loss, lr,
                gradNorm, bucketHeight, bucketWidth, rank, ts, source);
    }

    /** A step with only the required fields set. */
    public static StepEvent of(long step, double timeS, double ts) {
        return new StepEvent(step, timeS, null, null, null, null, null, null, null, null, null, null, null, null, ts, null);
    }

    /** The share of the step spent waiting for input (data, text encoder, VAE), at most 1; NaN when not split. */
    public double waitShare() {
        return timeS == null ? Double.NaN : waitShare(timeS, nan(dataTimeS), nan(lmTimeS), nan(vaeTimeS));
    }

    /** The same from a report's columns (NaN: not given): one rule for the agent and {@code data_starvation}. */
    public static double waitShare(double timeS, double dataTimeS, double lmTimeS, double vaeTimeS) {
        if (!(timeS > 0) || Double.isNaN(dataTimeS) && Double.isNaN(lmTimeS) && Double.isNaN(vaeTimeS)) {
            return Double.NaN;
        }
        return Math.min(1, (waited(dataTimeS, timeS) + waited(lmTimeS, timeS) + waited(vaeTimeS, timeS)) / timeS);
    }

    private static double waited(double part, double timeS) {
        return part >= 0 ? Math.min(part, timeS) : 0;
    }

    private static double nan(Double value) {
        return value == null ? Double.NaN : value;
    }

    /** Whether any report's loss is NaN or infinite: the run diverged (agents send it at once, collectors judge it). */
    public static boolean anyNonFiniteLoss(List<StepEvent> steps) {
        for (StepEvent e : steps) { // a loop, not a stream: asked at every poll by an agent that runs without C2
            if (e != null && e.loss() != null && !Double.isFinite(e.loss())) {
                return true;
            }
        }
        return false;
    }
}
