package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.List;

/**
 * A GPU's rolling window as a ring of primitive columns (1,024 GPUs × 600 entries must fit a small heap); polls
 * within {@code resolutionSeconds} of an entry's start merge into it. Guarded by the fleet's lock.
 */
public final class GpuWindow implements GpuSeries {

    private final String uuid;
    private final double spanSeconds;
    private final double resolutionSeconds;
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
    private final Ring ring;
    /** The poll being added, read once into primitives (no object per poll). */
    private final Poll poll = new Poll();
    /** Entries ever added (a merge adds none): entry {@code i} is the {@code (added - size + i)}-th. */
    private long added;
    /**
     * Where the newest run of entries with the same memory in use begins (counted as {@link #added} counts; NaN ends
     * a run, so it is {@code added} when the newest is NaN): every entry from there on has the newest's value.
     */
    private long memoryStillSince;

    private String host;
    private int index;
    private String name;
    private double memoryTotal = Double.NaN;
    /** Highest memory in use since the GPU was attributed to its run (kept outside the window: no scan). */
    private double peakMemory = Double.NaN;
    private boolean lost;
    /** The newest poll's processes that are not the run's (set by the ingest after attribution). */
    private List<OtherProcess> others = List.of();

    /** One poll's values as the window keeps them (NaN where absent or out of range). */
    private static final class Poll {
        double ts;
        double memory;
        double util;
        double utilMin;
        double idle;
        int mask;
        double sm;
        double smMax;
        double watts;
        double temp;
        double smAct;
        double tensorAct;
        double dramAct;
        double link;
        double rx;
    }

    public GpuWindow(String uuid, double spanSeconds, int capacity) {
        this.uuid = uuid;
        this.spanSeconds = spanSeconds;
        this.resolutionSeconds = spanSeconds / capacity;
        ring = new Ring(capacity);
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

    /** A read-only copy of entries {@code [from, to)} for reading outside the fleet's lock; never added to. */
    public GpuWindow copy(int from, int to) {
        if (from < 0 || to > ring.size() || from > to) {
            throw new IndexOutOfBoundsException("entries [" + from + ", " + to + ") of " + ring.size());
        }
        return new GpuWindow(this, from, to);
    }

    private GpuWindow(GpuWindow src, int from, int to) {
        int n = to - from;
        uuid = src.uuid;
        spanSeconds = src.spanSeconds;
        int capacity = Math.max(1, n);
        resolutionSeconds = spanSeconds / capacity;
        ts = src.ring.copy(src.ts, new double[capacity], from, n);
        memoryUsed = src.ring.copy(src.memoryUsed, new double[capacity], from, n);
        utilization = src.ring.copy(src.utilization, new float[capacity], from, n);
        utilizationMin = src.ring.copy(src.utilizationMin, new float[capacity], from, n);
        idleFraction = src.ring.copy(src.idleFraction, new float[capacity], from, n);
        smClock = src.ring.copy(src.smClock, new float[capacity], from, n);
        smClockMax = src.ring.copy(src.smClockMax, new float[capacity], from, n);
        power = src.ring.copy(src.power, new float[capacity], from, n);
        temperature = src.ring.copy(src.temperature, new float[capacity], from, n);
        reasons = src.ring.copy(src.reasons, new int[capacity], from, n);
        smActive = src.ring.copy(src.smActive, new float[capacity], from, n);
        tensorActive = src.ring.copy(src.tensorActive, new float[capacity], from, n);
        dramActive = src.ring.copy(src.dramActive, new float[capacity], from, n);
        nvlinkRate = src.ring.copy(src.nvlinkRate, new float[capacity], from, n);
        pcieRx = src.ring.copy(src.pcieRx, new float[capacity], from, n);
        merged = new short[0]; // only add() reads it, and a copy is never added to
        ring = Ring.filled(capacity, n);
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

    /** Adds one poll stamped {@code sampleTs} (unix seconds, already clamped to the collector's now). */
    public void add(GpuSample s, double sampleTs) {
        read(s, sampleTs);
        if (ring.size() > 0) {
            int last = ring.newest();
            if (sampleTs < ts[last] + resolutionSeconds && merged[last] < Short.MAX_VALUE) {
                merge(last);
                return;
            }
        }
        append();
    }

    /** Reads a poll into {@link #poll} and the GPU's facts. */
    private void read(GpuSample s, double sampleTs) {
        if (s.name() != null) {
            name = s.name();
        }
        index = s.index();
        lost = Boolean.TRUE.equals(s.lost());
        if (finite(s.memoryTotalBytes())) {
            memoryTotal = s.memoryTotalBytes();
        }
        Poll p = poll;
        p.ts = sampleTs;
        double util = ratio(s.utilizationRatio());
        UtilizationWindow w = s.utilizationWindow();
        boolean windowed = w != null && w.count() > 0;
        p.utilMin = windowed ? w.minRatio() : util;
        p.idle = windowed ? w.idleFraction() : (Double.isNaN(util) ? Double.NaN : util <= 0.05 ? 1 : 0);
        p.util = windowed && Double.isNaN(util) ? w.meanRatio() : util;
        p.mask = s.clockEventReasons() == null ? 0 : GpuSeries.reasonMask(s.clockEventReasons());
        p.memory = finite(s.memoryUsedBytes()) ? s.memoryUsedBytes() : Double.NaN;
        if (!Double.isNaN(p.memory) && !(p.memory <= peakMemory)) {
            peakMemory = p.memory;
        }
        p.sm = finite(s.smClockHz()) ? s.smClockHz() : Double.NaN;
        p.smMax = finite(s.smClockMaxHz()) ? s.smClockMaxHz() : Double.NaN;
        p.watts = finiteD(s.powerWatts());
        p.temp = finiteD(s.temperatureCelsius());
        GpuActivity a = lost ? null : s.activity();
        p.smAct = a == null ? Double.NaN : ratio(a.smActiveRatio());
        p.tensorAct = a == null ? Double.NaN : ratio(a.tensorActiveRatio());
        p.dramAct = a == null ? Double.NaN : ratio(a.dramActiveRatio());
        p.link = nvlinkRate(a, sampleTs);
        p.rx = a == null ? Double.NaN : finiteD(a.pcieRxBytesPerSecond());
    }

    /** Merges the poll into entry {@code last}, which started less than the resolution before it. */
    private void merge(int last) {
        Poll p = poll;
        int n = merged[last];
        double before = memoryUsed[last];
        memoryUsed[last] = maxNan(before, p.memory);
        if (!(memoryUsed[last] == before)) { // a new run begins at this entry (or after it, when NaN)
            memoryStillSince = Double.isNaN(memoryUsed[last]) ? added : added - 1;
        }
        utilization[last] = (float) meanNan(utilization[last], p.util, n);
        utilizationMin[last] = (float) minNan(utilizationMin[last], p.utilMin);
        idleFraction[last] = (float) meanNan(idleFraction[last], p.idle, n);
        smClock[last] = (float) meanNan(smClock[last], p.sm, n);
        smClockMax[last] = (float) maxNan(smClockMax[last], p.smMax);
        power[last] = (float) meanNan(power[last], p.watts, n);
        temperature[last] = (float) maxNan(temperature[last], p.temp);
        reasons[last] |= p.mask;
        smActive[last] = (float) meanNan(smActive[last], p.smAct, n);
        tensorActive[last] = (float) meanNan(tensorActive[last], p.tensorAct, n);
        dramActive[last] = (float) meanNan(dramActive[last], p.dramAct, n);
        nvlinkRate[last] = (float) meanNan(nvlinkRate[last], p.link, n);
        pcieRx[last] = (float) meanNan(pcieRx[last], p.rx, n);
        merged[last] = (short) (n + 1);
    }

    /** Adds the poll as a new entry, the oldest going when the window is full. */
    private void append() {
        Poll p = poll;
        if (ring.full()) {
            ring.dropOldest();
        }
        if (!(ring.size() > 0 && p.memory == memoryUsed[ring.newest()])) { // NaN equals nothing
            memoryStillSince = Double.isNaN(p.memory) ? added + 1 : added;
        }
        added++;
        int i = ring.append();
        ts[i] = p.ts;
        memoryUsed[i] = p.memory;
        utilization[i] = (float) p.util;
        utilizationMin[i] = (float) p.utilMin;
        idleFraction[i] = (float) p.idle;
        smClock[i] = (float) p.sm;
        smClockMax[i] = (float) p.smMax;
        power[i] = (float) p.watts;
        temperature[i] = (float) p.temp;
        reasons[i] = p.mask;
        smActive[i] = (float) p.smAct;
        tensorActive[i] = (float) p.tensorAct;
        dramActive[i] = (float) p.dramAct;
        nvlinkRate[i] = (float) p.link;
        pcieRx[i] = (float) p.rx;
        merged[i] = 1;
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
    public void trim(double now) {
        double oldest = now - spanSeconds;
        while (ring.size() > 0 && ts[ring.oldest()] < oldest) {
            ring.dropOldest();
        }
    }

    public double lastTs() {
        return ring.size() == 0 ? Double.NaN : ts[ring.newest()];
    }

    public void host(String host) {
        this.host = host;
    }

    public void markLost() {
        lost = true;
    }

    /** Highest memory in use since the GPU was attributed to its run. */
    public double peakMemory() {
        return peakMemory;
    }

    /** The GPU was given to another run: what an earlier run peaked at is not this run's peak. */
    public void restartPeak(double bytes) {
        peakMemory = bytes;
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
        return ring.size();
    }

    @Override
    public double ts(int i) {
        return ts[ring.slot(i)];
    }

    @Override
    public double memoryUsedBytes(int i) {
        return memoryUsed[ring.slot(i)];
    }

    @Override
    public int memoryStillFrom() {
        return (int) Math.max(0, Math.min(ring.size(), memoryStillSince - (added - ring.size())));
    }

    @Override
    public double utilizationRatio(int i) {
        return utilization[ring.slot(i)];
    }

    @Override
    public double utilizationMinRatio(int i) {
        return utilizationMin[ring.slot(i)];
    }

    @Override
    public double idleFraction(int i) {
        return idleFraction[ring.slot(i)];
    }

    @Override
    public double smClockHz(int i) {
        return smClock[ring.slot(i)];
    }

    @Override
    public double smClockMaxHz(int i) {
        return smClockMax[ring.slot(i)];
    }

    @Override
    public double powerWatts(int i) {
        return power[ring.slot(i)];
    }

    @Override
    public double temperatureCelsius(int i) {
        return temperature[ring.slot(i)];
    }

    @Override
    public int clockEventMask(int i) {
        return reasons[ring.slot(i)];
    }

    @Override
    public double smActiveRatio(int i) {
        return smActive[ring.slot(i)];
    }

    @Override
    public double tensorActiveRatio(int i) {
        return tensorActive[ring.slot(i)];
    }

    @Override
    public double dramActiveRatio(int i) {
        return dramActive[ring.slot(i)];
    }

    @Override
    public double nvlinkBytesPerSecond(int i) {
        return nvlinkRate[ring.slot(i)];
    }

    @Override
    public double pcieRxBytesPerSecond(int i) {
        return pcieRx[ring.slot(i)];
    }

    @Override
    public List<OtherProcess> otherProcesses() {
        return others;
    }

    /** The newest poll's processes that are not the run's. */
    public void otherProcesses(List<OtherProcess> others) {
        this.others = others;
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

    /** The larger of two readings, ignoring a NaN one. */
    public static double maxNan(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }

    public static double minNan(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.min(a, b);
    }

    /** Running mean of an entry that already merged {@code n} polls. */
    private static double meanNan(double mean, double x, int n) {
        return Double.isNaN(mean) ? x : Double.isNaN(x) ? mean : mean + (x - mean) / (n + 1);
    }
}
