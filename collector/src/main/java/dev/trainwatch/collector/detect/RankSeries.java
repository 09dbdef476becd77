package dev.trainwatch.collector.detect;

/**
 * The step reports of each rank that logs its own steps (Open-Sora's {@code Rank N | …} timer lines, lines with
 * torchrun's {@code [rankN]:} prefix, pushed reports with {@code rank}), lowest rank first. The run's own
 * {@link StepSeries} counts each training step once; this keeps what tells the ranks apart: each rank's step and
 * data-load times, which identify a straggling or data-starved rank. Read it only inside a {@link RunContext}
 * evaluation.
 */
public interface RankSeries {

    /** No rank reported its own steps (rank-less reports, or a run that only pushes its own steps). */
    RankSeries NONE = new RankSeries() {
        @Override
        public int count() {
            return 0;
        }

        @Override
        public int rank(int k) {
            throw new IndexOutOfBoundsException(k);
        }

        @Override
        public StepSeries steps(int k) {
            throw new IndexOutOfBoundsException(k);
        }
    };

    int count();

    /** The {@code k}-th lowest rank tracked. */
    int rank(int k);

    /** The recent reports of the {@code k}-th lowest rank, oldest first. */
    StepSeries steps(int k);
}
