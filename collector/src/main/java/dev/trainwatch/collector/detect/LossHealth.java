package dev.trainwatch.collector.detect;

/**
 * What a run's reported losses and grad norms look like, for the loss detectors: the newest finite losses (with
 * the bucket each came from) and the run of non-finite reports. Read under the fleet's lock.
 */
public interface LossHealth {

    LossHealth NONE = new LossHealth() {
        @Override
        public int finiteCount() {
            return 0;
        }

        @Override
        public double finiteLoss(int i) {
            throw new IndexOutOfBoundsException(i);
        }

        @Override
        public long finiteStep(int i) {
            throw new IndexOutOfBoundsException(i);
        }

        @Override
        public int finiteBucket(int i) {
            throw new IndexOutOfBoundsException(i);
        }
    };

    /** Finite losses kept, oldest first (at most the newest 64 since the run last restarted). */
    int finiteCount();

    double finiteLoss(int i);

    long finiteStep(int i);

    /** Bucket cells (latent height × width) of the report, 0 when the log does not say. */
    int finiteBucket(int i);

    /** Reports in a row, up to the newest, whose loss was NaN or infinite. */
    default int nonFiniteLossStreak() {
        return 0;
    }

    /** Reports in a row, up to the newest, whose grad norm was NaN or infinite. */
    default int nonFiniteGradStreak() {
        return 0;
    }

    /** Reports in a row, up to the newest, with a finite loss and grad norm (or none reported). */
    default int finiteStreak() {
        return 0;
    }

    default long nonFiniteLossReports() {
        return 0;
    }

    /** Step and time of the first report of the current non-finite streak (loss or grad norm); -1 / NaN if none. */
    default long firstNonFiniteStep() {
        return -1;
    }

    default double firstNonFiniteTs() {
        return Double.NaN;
    }

    /** What the newest non-finite value was, as the log printed it: "nan", "inf" or "-inf". */
    default String nonFiniteValue() {
        return null;
    }
}
