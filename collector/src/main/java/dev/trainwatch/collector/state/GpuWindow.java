package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.List;

/**
 * A GPU's rolling window as a ring of primitive columns (no object per sample: 1,024 GPUs × 600 entries must fit
 * a small heap). Polls that arrive within {@code resolutionSeconds} of an entry's start are merged into it, so
 * the window covers its span whatever the polling interval. Not thread-safe: guarded by the fleet's lock.
 */
final class GpuWindow implements GpuSeries {

    private final String uuid;
    private final double spanSeconds;
    private final double resolutionSeconds;
    private final int capacity;
    private final double[] ts;
    private final double[] memoryUsed;
    private final float[] utilization;
    private final float[] utilizationMin;
    private final float[] idleFraction;
    private final float[] smClock;
    private final float[] smClockMax;
    private final float[] power;
    private final float[] temperature;
    private final int[] reasons;
    // hardware activity counters (NaN where the GPU has none)
    private final float[] smActive;
    private final float[] tensorActive;
    private final float[] dramActive;
    private final float[] nvlinkRate;
    private final float[] pcieRx;
    private final short[] merged;
    /** The newest NVLink counter (rx + tx bytes) and its time, for the rate of the next poll. */
    private double lastNvlinkBytes = Double.NaN;
    private double lastNvlinkTs = Double.NaN;
    private int head;
    private int size;
    /** Entries ever added (a merge adds none): entry {@code i} is the {@code (added - size + i)}-th. */
    private long added;
    /**
     * Where the newest run of entries with the same memory in use begins (counted as {@link #added} counts; NaN ends
     * a run, so it is {@code added} when the newest is NaN): every entry from there on has the newest's value.
     */
    private long memoryStillSince;

    String host;
    int index;
    String name;
    double memoryTotal = Double.NaN;
    /** Highest memory in use since the GPU was attributed to its run (kept outside the window: no scan). */
    double peakMemory = Double.NaN;
    boolean lost;
    /** The newest poll's processes that are not the run's ({@code BatchIngest} sets it after attribution). */
    List<OtherProcess> others = List.of();

    GpuWindow(String uuid, double spanSeconds, int capacity) {
        this.uuid = uuid;
        this.spanSeconds = spanSeconds;
        this.capacity = capacity;
        this.resolutionSeconds = spanSeconds / capacity;
        ts = new double[capacity];
        memoryUsed = new double[capacity];
        utilization = new float[capacity];
        utilizationMin = new float[capacity];
        idleFraction = new float[capacity];
        smClock = new float[capacity];
        smClockMax = new float[capacity];
        power = new float[capacity];
        temperature = new float[capacity];
        reasons = new int[capacity];
        smActive = new float[capacity];
        tensorActive = new float[capacity];
        dramActive = new float[capacity];
        nvlinkRate = new float[capacity];
        pcieRx = new float[capacity];
        merged = new short[capacity];
    }

    /**
     * A read-only copy of entries {@code [from, to)} (window order) and of the GPU's facts, for reading outside the
     * fleet's lock ({@code GET /v1/runs/{id}/series}). Costs one array copy per column of the entries kept; the
     * copy must never be {@link #add added} to (it merges nothing and has no spare room).
     */
    GpuWindow copy(int from, int to) {
        if (from < 0 || to > size || from > to) {
            throw new IndexOutOfBoundsException("entries [" + from + ", " + to + ") of " + size);
        }
        return new GpuWindow(this, from, to);
    }

    private GpuWindow(GpuWindow src, int from, int to) {
        int n = to - from;
        uuid = src.uuid;
        spanSeconds = src.spanSeconds;
        capacity = Math.max(1, n);
        resolutionSeconds = spanSeconds / capacity;
        ts = src.range(src.ts, new double[capacity], from, n);
        memoryUsed = src.range(src.memoryUsed, new double[capacity], from, n);
        utilization = src.range(src.utilization, new float[capacity], from, n);
        utilizationMin = src.range(src.utilizationMin, new float[capacity], from, n);
        idleFraction = src.range(src.idleFraction, new float[capacity], from, n);
        smClock = src.range(src.smClock, new float[capacity], from, n);
        smClockMax = src.range(src.smClockMax, new float[capacity], from, n);
        power = src.range(src.power, new float[capacity], from, n);
        temperature = src.range(src.temperature, new float[capacity], from, n);
        reasons = src.range(src.reasons, new int[capacity], from, n);
        smActive = src.range(src.smActive, new float[capacity], from, n);
        tensorActive = src.range(src.tensorActive, new float[capacity], from, n);
        dramActive = src.range(src.dramActive, new float[capacity], from, n);
        nvlinkRate = src.range(src.nvlinkRate, new float[capacity], from, n);
        pcieRx = src.range(src.pcieRx, new float[capacity], from, n);
        merged = new short[0]; // only add() reads it, and a copy is never added to
        head = 0;
        size = n;
        added = n;
        memoryStillSince = GpuSeries.memoryStillFrom(this);
        host = src.host;
        index = src.index;
        name = src.name;
        memoryTotal = src.memoryTotal;
        peakMemory = src.peakMemory;
        lost = src.lost;
        others = src.others;
    }

    /** Copies {@code n} entries from window position {@code from} of ring column {@code src} to {@code dst}[0..n). */
    private <T> T range(T src, T dst, int from, int n) {
        int start = slot(from);
        int first = Math.min(n, capacity - start);
        System.arraycopy(src, start, dst, 0, first);
        System.arraycopy(src, 0, dst, first, n - first);
        return dst;
    }

    /** Adds one poll stamped {@code sampleTs} (unix seconds, already clamped to the collector's now). */
    void add(GpuSample s, double sampleTs) {
        if (s.name() != null) {
            name = s.name();
        }
        index = s.index();
        lost = Boolean.TRUE.equals(s.lost());
        if (finite(s.memoryTotalBytes())) {
            memoryTotal = s.memoryTotalBytes();
        }
        double util = ratio(s.utilizationRatio());
        UtilizationWindow w = s.utilizationWindow();
        double utilMin = w != null && w.count() > 0 ? w.minRatio() : util;
        double idle = w != null && w.count() > 0 ? w.idleFraction() : (Double.isNaN(util) ? Double.NaN : util <= 0.05 ? 1 : 0);
        if (w != null && w.count() > 0 && Double.isNaN(util)) {
            util = w.meanRatio();
        }
        int mask = s.clockEventReasons() == null ? 0 : GpuSeries.reasonMask(s.clockEventReasons());
        double mem = finite(s.memoryUsedBytes()) ? s.memoryUsedBytes() : Double.NaN;
        if (!Double.isNaN(mem) && !(mem <= peakMemory)) {
            peakMemory = mem;
        }
        double sm = finite(s.smClockHz()) ? s.smClockHz() : Double.NaN;
        double smMax = finite(s.smClockMaxHz()) ? s.smClockMaxHz() : Double.NaN;
        double watts = finiteD(s.powerWatts());
        double temp = finiteD(s.temperatureCelsius());
        GpuActivity a = lost ? null : s.activity();
        double smAct = a == null ? Double.NaN : ratio(a.smActiveRatio());
        double tensorAct = a == null ? Double.NaN : ratio(a.tensorActiveRatio());
        double dramAct = a == null ? Double.NaN : ratio(a.dramActiveRatio());
        double link = nvlinkRate(a, sampleTs);
        double rx = a == null ? Double.NaN : finiteD(a.pcieRxBytesPerSecond());

        if (size > 0) {
            int last = slot(size - 1);
            double lastTs = ts[last];
            if (sampleTs < lastTs + resolutionSeconds && merged[last] < Short.MAX_VALUE) {
                int n = merged[last];
                double before = memoryUsed[last];
                memoryUsed[last] = maxNan(before, mem);
                if (!(memoryUsed[last] == before)) { // a new run begins at this entry (or after it, when NaN)
                    memoryStillSince = Double.isNaN(memoryUsed[last]) ? added : added - 1;
                }
                utilization[last] = (float) meanNan(utilization[last], util, n);
                utilizationMin[last] = (float) minNan(utilizationMin[last], utilMin);
                idleFraction[last] = (float) meanNan(idleFraction[last], idle, n);
                smClock[last] = (float) meanNan(smClock[last], sm, n);
                smClockMax[last] = (float) maxNan(smClockMax[last], smMax);
                power[last] = (float) meanNan(power[last], watts, n);
                temperature[last] = (float) maxNan(temperature[last], temp);
                reasons[last] |= mask;
                smActive[last] = (float) meanNan(smActive[last], smAct, n);
                tensorActive[last] = (float) meanNan(tensorActive[last], tensorAct, n);
                dramActive[last] = (float) meanNan(dramActive[last], dramAct, n);
                nvlinkRate[last] = (float) meanNan(nvlinkRate[last], link, n);
                pcieRx[last] = (float) meanNan(pcieRx[last], rx, n);
                merged[last] = (short) (n + 1);
                return;
            }
        }
        if (size == capacity) {
            head = (head + 1) % capacity;
            size--;
        }
        int i = slot(size);
        if (!(size > 0 && mem == memoryUsed[slot(size - 1)])) { // NaN equals nothing
            memoryStillSince = Double.isNaN(mem) ? added + 1 : added;
        }
        added++;
        ts[i] = sampleTs;
        memoryUsed[i] = mem;
        utilization[i] = (float) util;
        utilizationMin[i] = (float) utilMin;
        idleFraction[i] = (float) idle;
        smClock[i] = (float) sm;
        smClockMax[i] = (float) smMax;
        power[i] = (float) watts;
        temperature[i] = (float) temp;
        reasons[i] = mask;
        smActive[i] = (float) smAct;
        tensorActive[i] = (float) tensorAct;
        dramActive[i] = (float) dramAct;
        nvlinkRate[i] = (float) link;
        pcieRx[i] = (float) rx;
        merged[i] = 1;
        size++;
    }

    /**
     * NVLink bytes per second since the previous sample with the counters: the counter's increase over the time
     * between the two; NaN for the first sample, a counter that went back (driver reload) or no counters.
     */
    private double nvlinkRate(GpuActivity a, double sampleTs) {
        Long rx = a == null ? null : a.nvlinkRxBytes();
        Long tx = a == null ? null : a.nvlinkTxBytes();
        if (rx == null && tx == null || rx != null && rx < 0 || tx != null && tx < 0) {
            return Double.NaN;
        }
        double bytes = (rx == null ? 0.0 : rx) + (tx == null ? 0.0 : tx);
        double rate = Double.NaN;
        double dt = sampleTs - lastNvlinkTs;
        if (dt > 0 && bytes >= lastNvlinkBytes) {
            rate = (bytes - lastNvlinkBytes) / dt;
        }
        if (Double.isNaN(lastNvlinkTs) || sampleTs >= lastNvlinkTs) {
            lastNvlinkBytes = bytes;
            lastNvlinkTs = sampleTs;
        }
        return rate;
    }

    /** Drops entries older than the window before {@code now}. */
    void trim(double now) {
        double oldest = now - spanSeconds;
        while (size > 0 && ts[head] < oldest) {
            head = (head + 1) % capacity;
            size--;
        }
    }

    double lastTs() {
        return size == 0 ? Double.NaN : ts[slot(size - 1)];
    }

    /** The ring position of entry {@code i} (0 ≤ i < capacity): a compare, not a division, on every read. */
    private int slot(int i) {
        int j = head + i;
        return j < capacity ? j : j - capacity;
    }

    @Override
    public String uuid() {
        return uuid;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int index() {
        return index;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public double memoryTotalBytes() {
        return memoryTotal;
    }

    @Override
    public boolean lost() {
        return lost;
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
    public double memoryUsedBytes(int i) {
        return memoryUsed[slot(i)];
    }

    @Override
    public int memoryStillFrom() {
        return (int) Math.max(0, Math.min(size, memoryStillSince - (added - size)));
    }

    @Override
    public double utilizationRatio(int i) {
        return utilization[slot(i)];
    }

    @Override
    public double utilizationMinRatio(int i) {
        return utilizationMin[slot(i)];
    }

    @Override
    public double idleFraction(int i) {
        return idleFraction[slot(i)];
    }

    @Override
    public double smClockHz(int i) {
        return smClock[slot(i)];
    }

    @Override
    public double smClockMaxHz(int i) {
        return smClockMax[slot(i)];
    }

    @Override
    public double powerWatts(int i) {
        return power[slot(i)];
    }

    @Override
    public double temperatureCelsius(int i) {
        return temperature[slot(i)];
    }

    @Override
    public int clockEventMask(int i) {
        return reasons[slot(i)];
    }

    @Override
    public double smActiveRatio(int i) {
        return smActive[slot(i)];
    }

    @Override
    public double tensorActiveRatio(int i) {
        return tensorActive[slot(i)];
    }

    @Override
    public double dramActiveRatio(int i) {
        return dramActive[slot(i)];
    }

    @Override
    public double nvlinkBytesPerSecond(int i) {
        return nvlinkRate[slot(i)];
    }

    @Override
    public double pcieRxBytesPerSecond(int i) {
        return pcieRx[slot(i)];
    }

    @Override
    public List<OtherProcess> otherProcesses() {
        return others;
    }

    private static boolean finite(Long v) {
        return v != null && v >= 0;
    }

    private static double finiteD(Double v) {
        return v != null && Double.isFinite(v) ? v : Double.NaN;
    }

    private static double ratio(Double v) {
        return v != null && Double.isFinite(v) && v >= 0 && v <= 1.0001 ? Math.min(1.0, v) : Double.NaN;
    }

    private static double maxNan(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }

    private static double minNan(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.min(a, b);
    }

    /** Running mean of an entry that already merged {@code n} polls. */
    private static double meanNan(double mean, double x, int n) {
        return Double.isNaN(mean) ? x : Double.isNaN(x) ? mean : mean + (x - mean) / (n + 1);
    }
}
