package dev.trainwatch.protocol;

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
 * @param loss          training loss
 * @param lr            learning rate
 * @param gradNorm      gradient norm
 * @param bucketHeight  latent height of the multi-scale bucket (PixArt/Sana {@code s:(h, w)})
 * @param bucketWidth   latent width of the multi-scale bucket
 * @param rank          the rank that logged it, when known
 * @param ts            unix seconds when the step ended
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
        Double ts) {

    /** A step with only the required fields set. */
    public static StepEvent of(long step, double timeS, double ts) {
        return new StepEvent(step, timeS, null, null, null, null, null, null, null, null, null, null, null, null, ts);
    }
}
