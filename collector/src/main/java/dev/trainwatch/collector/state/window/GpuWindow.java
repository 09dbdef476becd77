package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.GpuSeries;
import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.UtilizationWindow;
import java.util.List;
import java.util.Objects;

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
    /**
     * A column per {@link Reading} (NaN where absent or out of range). A poll merging into an entry adds to the
     * running mean, except where {@link #merge} says max or min.
     */
    private final float[][] cols;
    private final int[] reasons;
    private final short[] merged;
    /** The newest NVLink counter (rx + tx bytes) and its time, for the rate of the next poll. */
    private double lastNvlinkBytes = Double.NaN;
    private double lastNvlinkTs = Double.NaN;
    private final Ring ring;
    /** The poll being added, read once into primitives (no object per poll): its readings, then the rest. */
    private final double[] poll = new double[COLUMNS.length];
    private double pollTs;
    private double pollMemory;
    private int pollMask;
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

    private static final Reading[] COLUMNS = Reading.values();
    /** Utilisation at or below this counts as idle (the agent's idle threshold, 5%). */
    public static final double IDLE_RATIO = 0.05;

    public GpuWindow(String uuid, double spanSeconds, int capacity) {
        this.uuid = uuid;
        this.spanSeconds = spanSeconds;
        this.resolutionSeconds = spanSeconds / capacity;
        ring = new Ring(capacity);
        ts = new double[capacity];
        memoryUsed = new double[capacity];
        cols = new float[COLUMNS.length][capacity];
        reasons = new int[capacity];
        merged = new short[capacity];
    }

    /** A read-only copy of entries {@code [from, to)} for reading outside the fleet's lock; never added to. */
    public GpuWindow copy(int from, int to) {
        Objects.checkFromToIndex(from, to, ring.size());
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
        cols = new float[COLUMNS.length][];
        for (int c = 0; c < cols.length; c++) {
            cols[c] = src.ring.copy(src.cols[c], new float[capacity], from, n);
        }
        reasons = src.ring.copy(src.reasons, new int[capacity], from, n);
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
        pollTs = sampleTs;
        double util = ratio(s.utilizationRatio());
        UtilizationWindow w = s.utilizationWindow();
        boolean windowed = w != null && w.count() > 0;
        put(Reading.UTILIZATION_MIN, windowed ? w.minRatio() : util);
        double idle = Double.isNaN(util) ? Double.NaN : util <= IDLE_RATIO ? 1 : 0;
        put(Reading.IDLE_FRACTION, windowed ? w.idleFraction() : idle);
        put(Reading.UTILIZATION, windowed && Double.isNaN(util) ? w.meanRatio() : util);
        pollMask = s.clockEventReasons() == null ? 0 : GpuSeries.reasonMask(s.clockEventReasons());
        pollMemory = finite(s.memoryUsedBytes()) ? s.memoryUsedBytes() : Double.NaN;
        if (!Double.isNaN(pollMemory) && !(pollMemory <= peakMemory)) {
            peakMemory = pollMemory;
        }
        put(Reading.SM_CLOCK_HZ, finite(s.smClockHz()) ? s.smClockHz() : Double.NaN);
        put(Reading.SM_CLOCK_MAX_HZ, finite(s.smClockMaxHz()) ? s.smClockMaxHz() : Double.NaN);
        put(Reading.POWER_WATTS, finiteD(s.powerWatts()));
        put(Reading.TEMPERATURE_C, finiteD(s.temperatureCelsius()));
        GpuActivity a = lost ? null : s.activity();
        put(Reading.SM_ACTIVE, a == null ? Double.NaN : ratio(a.smActiveRatio()));
        put(Reading.TENSOR_ACTIVE, a == null ? Double.NaN : ratio(a.tensorActiveRatio()));
        put(Reading.DRAM_ACTIVE, a == null ? Double.NaN : ratio(a.dramActiveRatio()));
        put(Reading.NVLINK_BYTES_PER_S, nvlinkRate(a, sampleTs));
        put(Reading.PCIE_RX_BYTES_PER_S, a == null ? Double.NaN : finiteD(a.pcieRxBytesPerSecond()));
    }

    private void put(Reading c, double v) {
        poll[c.ordinal()] = v;
    }

    /** Merges the poll into entry {@code last}, which started less than the resolution before it. */
    private void merge(int last) {
        int n = merged[last];
        double before = memoryUsed[last];
        memoryUsed[last] = maxNan(before, pollMemory);
        if (!(memoryUsed[last] == before)) { // a new run begins at this entry (or after it, when NaN)
            memoryStillSince = Double.isNaN(memoryUsed[last]) ? added : added - 1;
        }
        for (Reading c : COLUMNS) {
            float[] col = cols[c.ordinal()];
            double x = poll[c.ordinal()];
            double m = switch (c) {
                case UTILIZATION_MIN -> minNan(col[last], x);
                case SM_CLOCK_MAX_HZ, TEMPERATURE_C -> maxNan(col[last], x);
                default -> meanNan(col[last], x, n);
            };
            col[last] = (float) m;
        }
        reasons[last] |= pollMask;
        merged[last] = (short) (n + 1);
    }

    /** Adds the poll as a new entry, the oldest going when the window is full. */
    private void append() {
        if (ring.full()) {
            ring.dropOldest();
        }
        if (!(ring.size() > 0 && pollMemory == memoryUsed[ring.newest()])) { // NaN equals nothing
            memoryStillSince = Double.isNaN(pollMemory) ? added + 1 : added;
        }
        added++;
        int i = ring.append();
        ts[i] = pollTs;
        memoryUsed[i] = pollMemory;
        for (int c = 0; c < cols.length; c++) {
            cols[c][i] = (float) poll[c];
        }
        reasons[i] = pollMask;
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
    public double reading(Reading r, int i) {
        return cols[r.ordinal()][ring.slot(i)];
    }

    @Override
    public int clockEventMask(int i) {
        return reasons[ring.slot(i)];
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
