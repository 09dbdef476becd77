package dev.trainwatch.collector.detect;

/**
 * A run's rolling window of step reports, oldest first, each at the time it arrived or was stamped. Absent values
 * are {@code NaN} (or -1 for {@link #rank}, {@link #bucketHeight}, {@link #bucketWidth}). Read it only inside a
 * {@link RunContext} evaluation.
 */
public interface StepSeries extends TimeOrdered {

    /**
     * The gap expected between two reports ({@link WindowStats#expectedReportGapSeconds(StepSeries)}). A series
     * that knows when it changes may keep the value until then.
     */
    double expectedReportGapSeconds();

    long step(int i);

    /** Seconds per step (mean over the report's interval). */
    double timeS(int i);

    double dataTimeS(int i);

    double lmTimeS(int i);

    double vaeTimeS(int i);

    /** Steps the report averages over (1 when not said). */
    int intervalSteps(int i);

    /** Samples per step across all ranks, NaN when unknown. */
    double samples(int i);

    int rank(int i);

    int bucketHeight(int i);

    int bucketWidth(int i);

    /** Training loss of the report, NaN when it did not say. */
    double loss(int i);

}
