package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.LossHealth;
import dev.trainwatch.protocol.StepEvent;

/**
 * A run's loss readings: the newest 64 finite losses (independent of the step window's span) and the streaks of
 * non-finite losses and grad norms; a restart starts the history again. Guarded by the fleet's lock.
 */
public final class LossWindow implements LossHealth {

    public static final int CAPACITY = 64;

    private final double[] loss = new double[CAPACITY];
    private final long[] step = new long[CAPACITY];
    private final int[] bucket = new int[CAPACITY];
    private final Ring ring = new Ring(CAPACITY);
    private long lastStep = -1;
    private double lastTs = Double.NEGATIVE_INFINITY;
    /** A step that goes back after at least this long without reports is a restart. */
    public static final double RESTART_PAUSE_SECONDS = 60;
    private int lossStreak;
    private int gradStreak;
    private int finiteStreak;
    private long nonFiniteReports;
    private long firstStep = -1;
    private double firstTs = Double.NaN;
    private String value;
    private double newestFinite = Double.NaN;

    /** One counted step report at {@code ts}. */
    public void add(StepEvent e, double ts) {
        long s = e.step();
        if (lastStep >= 0 && s < lastStep && ts - lastTs > RESTART_PAUSE_SECONDS) {
            // A restart (the step went back after a pause): a fresh run's loss is not a spike. A step that goes
            // back without a pause is a counter restarting by itself (a per-epoch progress bar).
            ring.clear();
        }
        lastStep = s;
        lastTs = ts;
        Double l = e.loss();
        Double g = e.gradNorm();
        boolean lossBad = l != null && !Double.isFinite(l);
        boolean gradBad = g != null && !Double.isFinite(g);
        if (lossBad || gradBad) {
            if (lossStreak == 0 && gradStreak == 0) {
                firstStep = s;
                firstTs = ts;
            }
            Double bad = lossBad ? l : g;
            value = Double.isNaN(bad) ? "nan" : bad > 0 ? "inf" : "-inf";
            finiteStreak = 0;
        } else if (l != null || g != null) {
            finiteStreak++;
        }
        // A report without the field (a timer line without a loss) leaves that streak as it was.
        if (l != null) {
            lossStreak = lossBad ? lossStreak + 1 : 0;
        }
        if (g != null) {
            gradStreak = gradBad ? gradStreak + 1 : 0;
        }
        if (lossBad) {
            nonFiniteReports++;
        }
        if (lossStreak == 0 && gradStreak == 0) {
            firstStep = -1;
            firstTs = Double.NaN;
        }
        if (l != null && Double.isFinite(l)) {
            int i = ring.append();
            loss[i] = l;
            step[i] = s;
            long cells = e.bucketHeight() != null && e.bucketWidth() != null
                    ? (long) e.bucketHeight() * e.bucketWidth() : 0;
            bucket[i] = (int) Math.min(Integer.MAX_VALUE, Math.max(0, cells));
            newestFinite = l;
        }
    }

    /** The newest finite loss, NaN when none. */
    public double newestFinite() {
        return newestFinite;
    }

    /** Whether the newest report's loss or grad norm was not finite. */
    public boolean newestNonFinite() {
        return lossStreak > 0 || gradStreak > 0;
    }

    @Override
    public int finiteCount() {
        return ring.size();
    }

    @Override
    public double finiteLoss(int i) {
        return loss[ring.checkedSlot(i)];
    }

    @Override
    public long finiteStep(int i) {
        return step[ring.checkedSlot(i)];
    }

    @Override
    public int finiteBucket(int i) {
        return bucket[ring.checkedSlot(i)];
    }

    @Override
    public int nonFiniteLossStreak() {
        return lossStreak;
    }

    @Override
    public int nonFiniteGradStreak() {
        return gradStreak;
    }

    @Override
    public int finiteStreak() {
        return finiteStreak;
    }

    @Override
    public long nonFiniteLossReports() {
        return nonFiniteReports;
    }

    @Override
    public long firstNonFiniteStep() {
        return firstStep;
    }

    @Override
    public double firstNonFiniteTs() {
        return firstTs;
    }

    @Override
    public String nonFiniteValue() {
        return value;
    }
}
