package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.collector.detect.WindowStats;
import dev.trainwatch.protocol.StepEvent;

/**
 * A run's step reports as a ring of primitive columns, bounded by count and by time. Not thread-safe: guarded by
 * the fleet's lock.
 */
final class StepWindow implements StepSeries {

    private final double spanSeconds;
    private final int capacity;
    private final double[] ts;
    private final long[] step;
    private final double[] time;
    private final double[] data;
    private final double[] model;
    private final double[] lm;
    private final double[] vae;
    private final double[] samples;
    private final int[] interval;
    private final int[] rank;
    private final int[] bucketH;
    private final int[] bucketW;
    /** Kept for {@code GET /v1/runs/{id}/series} (the loss curve); no detector reads it. */
    private final double[] loss;
    private int head;
    private int size;

    StepWindow(double spanSeconds, int capacity) {
        this.spanSeconds = spanSeconds;
        this.capacity = capacity;
        ts = new double[capacity];
        step = new long[capacity];
        time = new double[capacity];
        data = new double[capacity];
        model = new double[capacity];
        lm = new double[capacity];
        vae = new double[capacity];
        samples = new double[capacity];
        interval = new int[capacity];
        rank = new int[capacity];
        bucketH = new int[capacity];
        bucketW = new int[capacity];
        loss = new double[capacity];
    }

    /**
     * A read-only copy of every report held, for reading outside the fleet's lock ({@code GET /v1/runs/{id}/series}):
     * at most the window's capacity (512 by default) of each column. Never {@link #add added} to.
     */
    StepWindow copy() {
        return new StepWindow(this);
    }

    private StepWindow(StepWindow src) {
        int n = src.size;
        spanSeconds = src.spanSeconds;
        capacity = Math.max(1, n);
        ts = src.all(src.ts, new double[capacity]);
        step = src.all(src.step, new long[capacity]);
        time = src.all(src.time, new double[capacity]);
        data = src.all(src.data, new double[capacity]);
        model = src.all(src.model, new double[capacity]);
        lm = src.all(src.lm, new double[capacity]);
        vae = src.all(src.vae, new double[capacity]);
        samples = src.all(src.samples, new double[capacity]);
        interval = src.all(src.interval, new int[capacity]);
        rank = src.all(src.rank, new int[capacity]);
        bucketH = src.all(src.bucketH, new int[capacity]);
        bucketW = src.all(src.bucketW, new int[capacity]);
        loss = src.all(src.loss, new double[capacity]);
        head = 0;
        size = n;
    }

    /** Copies the {@link #size} entries of ring column {@code src}, oldest first, to {@code dst}. */
    private <T> T all(T src, T dst) {
        int first = Math.min(size, capacity - head);
        System.arraycopy(src, head, dst, 0, first);
        System.arraycopy(src, 0, dst, first, size - first);
        return dst;
    }

    /** Adds a report stamped {@code reportTs}; the caller has checked step and time are present and sane. */
    void add(StepEvent e, double reportTs) {
        reportGap = Double.NaN;
        reportGapKnown = false;
        if (size == capacity) {
            head = (head + 1) % capacity;
            size--;
        }
        int i = slot(size);
        ts[i] = reportTs;
        step[i] = e.step();
        time[i] = e.timeS();
        data[i] = seconds(e.dataTimeS());
        model[i] = seconds(e.modelTimeS());
        lm[i] = seconds(e.lmTimeS());
        vae[i] = seconds(e.vaeTimeS());
        samples[i] = e.samples() != null && Double.isFinite(e.samples()) && e.samples() > 0 ? e.samples() : Double.NaN;
        interval[i] = e.intervalSteps() != null && e.intervalSteps() > 0 ? e.intervalSteps() : 1;
        rank[i] = e.rank() != null && e.rank() >= 0 ? e.rank() : -1;
        bucketH[i] = e.bucketHeight() != null && e.bucketHeight() > 0 ? e.bucketHeight() : -1;
        bucketW[i] = e.bucketWidth() != null && e.bucketWidth() > 0 ? e.bucketWidth() : -1;
        loss[i] = e.loss() != null && Double.isFinite(e.loss()) ? e.loss() : Double.NaN;
        size++;
    }

    /** The expected report gap, kept until a report is added or dropped (several detectors ask per evaluation). */
    private double reportGap = Double.NaN;
    private boolean reportGapKnown;

    @Override
    public double expectedReportGapSeconds() {
        if (!reportGapKnown) {
            reportGap = WindowStats.computeExpectedReportGapSeconds(this);
            reportGapKnown = true;
        }
        return reportGap;
    }

    /** Drops reports older than the window before {@code now}, always keeping the newest. */
    void trim(double now) {
        double oldest = now - spanSeconds;
        while (size > 1 && ts[head] < oldest) {
            head = (head + 1) % capacity;
            size--;
            reportGapKnown = false;
        }
    }

    private static double seconds(Double v) {
        return v != null && Double.isFinite(v) && v >= 0 ? v : Double.NaN;
    }

    /** The ring position of entry {@code i} (0 ≤ i < capacity): a compare, not a division, on every read. */
    private int slot(int i) {
        int j = head + i;
        return j < capacity ? j : j - capacity;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public double ts(int i) {
        return ts[slot(i)];
    }

    @Override
    public long step(int i) {
        return step[slot(i)];
    }

    @Override
    public double timeS(int i) {
        return time[slot(i)];
    }

    @Override
    public double dataTimeS(int i) {
        return data[slot(i)];
    }

    @Override
    public double modelTimeS(int i) {
        return model[slot(i)];
    }

    @Override
    public double lmTimeS(int i) {
        return lm[slot(i)];
    }

    @Override
    public double vaeTimeS(int i) {
        return vae[slot(i)];
    }

    @Override
    public int intervalSteps(int i) {
        return interval[slot(i)];
    }

    @Override
    public double samples(int i) {
        return samples[slot(i)];
    }

    @Override
    public int rank(int i) {
        return rank[slot(i)];
    }

    @Override
    public int bucketHeight(int i) {
        return bucketH[slot(i)];
    }

    @Override
    public int bucketWidth(int i) {
        return bucketW[slot(i)];
    }

    @Override
    public double loss(int i) {
        return loss[slot(i)];
    }
}
