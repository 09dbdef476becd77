package dev.trainwatch.collector.detect;

/**
 * What a run's reported losses and grad norms look like, for the loss detectors: the newest finite losses (with
 * the bucket each came from) and the run of non-finite reports. Read under the fleet's lock.
 */
public interface LossHealth {

    /** Finite losses kept, oldest first (at most the newest 64 since the run last restarted). */
    int finiteCount();

    double finiteLoss(int i);

    long finiteStep(int i);

    /** Bucket cells (latent height × width) of the report, 0 when the log does not say. */
    int finiteBucket(int i);

    /** Reports in a row, up to the newest, whose loss was NaN or infinite. */
    int nonFiniteLossStreak();

    /** Reports in a row, up to the newest, whose grad norm was NaN or infinite. */
    int nonFiniteGradStreak();

    /** Reports in a row, up to the newest, with a finite loss and grad norm (or none reported). */
    int finiteStreak();

    long nonFiniteLossReports();

    /** Step and time of the first report of the current non-finite streak (loss or grad norm); -1 / NaN if none. */
    long firstNonFiniteStep();

    double firstNonFiniteTs();

    /** What the newest non-finite value was, as the log printed it: "nan", "inf" or "-inf". */
    String nonFiniteValue();
}
