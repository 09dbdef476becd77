package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.protocol.StepEvent;

/** A run's step reports as a ring of primitive columns, bounded by count and by time. Guarded by the fleet's lock. */
public final class StepWindow implements StepSeries {

    private final double spanSeconds;
    private final Ring ring;
    private final double[] ts;
    private final long[] step;
    private final double[] time;
    private final double[] data;
    private final double[] lm;
    private final double[] vae;
    private final double[] samples;
    private final int[] interval;
    private final int[] rank;
    private final int[] bucketH;
    private final int[] bucketW;
    /** Kept for {@code GET /v1/runs/{id}/series} (the loss curve); no detector reads it. */
    private final double[] loss;

    public StepWindow(double spanSeconds, int capacity) {
        this.spanSeconds = spanSeconds;
        ring = new Ring(capacity);
        ts = new double[capacity];
        step = new long[capacity];
        time = new double[capacity];
        data = new double[capacity];
        lm = new double[capacity];
        vae = new double[capacity];
        samples = new double[capacity];
        interval = new int[capacity];
        rank = new int[capacity];
        bucketH = new int[capacity];
        bucketW = new int[capacity];
        loss = new double[capacity];
    }

    /** A read-only copy of every report held, for reading outside the fleet's lock; never added to. */
    public StepWindow copy() {
        return new StepWindow(this);
    }

    private StepWindow(StepWindow src) {
        int n = src.ring.size();
        spanSeconds = src.spanSeconds;
        int capacity = Math.max(1, n);
        ring = Ring.filled(capacity, n);
        ts = src.all(src.ts, new double[capacity]);
        step = src.all(src.step, new long[capacity]);
        time = src.all(src.time, new double[capacity]);
        data = src.all(src.data, new double[capacity]);
        lm = src.all(src.lm, new double[capacity]);
        vae = src.all(src.vae, new double[capacity]);
        samples = src.all(src.samples, new double[capacity]);
        interval = src.all(src.interval, new int[capacity]);
        rank = src.all(src.rank, new int[capacity]);
        bucketH = src.all(src.bucketH, new int[capacity]);
        bucketW = src.all(src.bucketW, new int[capacity]);
        loss = src.all(src.loss, new double[capacity]);
    }

    private <T> T all(T src, T dst) {
        return ring.copy(src, dst, 0, ring.size());
    }

    /** Adds a report stamped {@code reportTs}; the caller has checked step and time are present and sane. */
    public void add(StepEvent e, double reportTs) {
        reportGap = Double.NaN;
        reportGapKnown = false;
        int i = ring.append();
        ts[i] = reportTs;
        step[i] = e.step();
        time[i] = e.timeS();
        data[i] = seconds(e.dataTimeS());
        lm[i] = seconds(e.lmTimeS());
        vae[i] = seconds(e.vaeTimeS());
        samples[i] = e.samples() != null && Double.isFinite(e.samples()) && e.samples() > 0 ? e.samples() : Double.NaN;
        interval[i] = e.intervalSteps() != null && e.intervalSteps() > 0 ? e.intervalSteps() : 1;
        rank[i] = e.rank() != null && e.rank() >= 0 ? e.rank() : -1;
        bucketH[i] = e.bucketHeight() != null && e.bucketHeight() > 0 ? e.bucketHeight() : -1;
        bucketW[i] = e.bucketWidth() != null && e.bucketWidth() > 0 ? e.bucketWidth() : -1;
        loss[i] = e.loss() != null && Double.isFinite(e.loss()) ? e.loss() : Double.NaN;
    }

    /** The expected report gap, kept until a report is added or dropped (several detectors ask per evaluation). */
    private double reportGap = Double.NaN;
    private boolean reportGapKnown;

    @Override
    public double expectedReportGapSeconds() {
        if (!reportGapKnown) {
            reportGap = WindowStats.expectedReportGapSeconds(this);
            reportGapKnown = true;
        }
        return reportGap;
    }

    /** Drops reports older than the window before {@code now}, always keeping the newest. */
    public void trim(double now) {
        double oldest = now - spanSeconds;
        while (ring.size() > 1 && ts[ring.oldest()] < oldest) {
            ring.dropOldest();
            reportGapKnown = false;
        }
    }

    private static double seconds(Double v) {
        return v != null && Double.isFinite(v) && v >= 0 ? v : Double.NaN;
    }

    @Override
    public int size() {
        return ring.size();
    }

    @Override
    public double ts(int i) {
        return ts[ring.slot(i)];
    }

    @Override
    public long step(int i) {
        return step[ring.slot(i)];
    }

    @Override
    public double timeS(int i) {
        return time[ring.slot(i)];
    }

    @Override
    public double dataTimeS(int i) {
        return data[ring.slot(i)];
    }

    @Override
    public double lmTimeS(int i) {
        return lm[ring.slot(i)];
    }

    @Override
    public double vaeTimeS(int i) {
        return vae[ring.slot(i)];
    }

    @Override
    public int intervalSteps(int i) {
        return interval[ring.slot(i)];
    }

    @Override
    public double samples(int i) {
        return samples[ring.slot(i)];
    }

    @Override
    public int rank(int i) {
        return rank[ring.slot(i)];
    }

    @Override
    public int bucketHeight(int i) {
        return bucketH[ring.slot(i)];
    }

    @Override
    public int bucketWidth(int i) {
        return bucketW[ring.slot(i)];
    }

    @Override
    public double loss(int i) {
        return loss[ring.slot(i)];
    }
}
