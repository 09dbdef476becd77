package dev.trainwatch.agent.nvml;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import dev.trainwatch.protocol.GpuActivity;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.IntPredicate;

/**
 * One GPU's activity counters per poll: GPM metrics over the poll interval (two samples per GPU, allocated once, the
 * older refilled each poll) and NVLink byte counters through field values. For the polling thread only.
 */
final class ActivityCounters {

    // nvmlGpmMetricId_t values (NVML 12 header)
    static final int GPM_SM_UTIL = 2;
    static final int GPM_SM_OCCUPANCY = 3;
    static final int GPM_ANY_TENSOR_UTIL = 5;
    static final int GPM_HMMA_TENSOR_UTIL = 7;
    static final int GPM_DRAM_BW_UTIL = 10;
    static final int GPM_PCIE_TX_PER_SEC = 20;
    static final int GPM_PCIE_RX_PER_SEC = 21;
    static final int GPM_NVLINK_TOTAL_RX_PER_SEC = 60;
    static final int GPM_NVLINK_TOTAL_TX_PER_SEC = 61;
    /** The metrics asked for, in the order of the request's entries. */
    private static final int[] METRICS = {GPM_SM_UTIL, GPM_SM_OCCUPANCY, GPM_ANY_TENSOR_UTIL, GPM_HMMA_TENSOR_UTIL,
        GPM_DRAM_BW_UTIL, GPM_PCIE_TX_PER_SEC, GPM_PCIE_RX_PER_SEC, GPM_NVLINK_TOTAL_RX_PER_SEC,
        GPM_NVLINK_TOTAL_TX_PER_SEC};
    private static final int GPM_METRICS_GET_VERSION = 1;
    private static final int GPM_SUPPORT_VERSION = 1;
    /** Room for 256 metric entries: NVML's array grew between releases without a version bump. */
    private static final int METRIC_ENTRIES = 256;
    private static final int METRIC_BYTES = 40;         // nvmlGpmMetric_t: metricId@0, nvmlReturn@4, value@8
    private static final int METRICS_OFFSET = 24;       // version@0, numMetrics@4, sample1@8, sample2@16
    /** What {@link #readGpm} stands for without GPM or an interval: every metric absent. Never written. */
    private static final double[] NO_GPM = new double[METRICS.length + 1];
    static { Arrays.fill(NO_GPM, Double.NaN); } // no stream: its pipeline classes would load for this alone
    /** GPM needs its two samples at least this far apart. */
    static final double MIN_GPM_WINDOW_SECONDS = 0.1;

    // field values (nvmlFieldValue_t, 40 bytes: fieldId@0, scopeId@4, valueType@24, nvmlReturn@28, value@32)
    static final int FI_NVLINK_THROUGHPUT_DATA_TX = 138;
    static final int FI_NVLINK_THROUGHPUT_DATA_RX = 139;
    /** scopeId for "all links summed". */
    static final int SCOPE_ALL_LINKS = -1;               // UINT_MAX
    /** NVML_NVLINK_MAX_LINKS of NVML 12 (Hopper has 18); older headers say 12. */
    static final int MAX_LINKS = 18;
    private static final int FIELD_BYTES = 40;
    private static final long KIB = 1024L;
    private static final double MIB = 1024.0 * 1024.0;

    private final NvmlApi api;
    private final IntPredicate check;
    private final Memory metricsBuf = new Memory(METRICS_OFFSET + (long) METRIC_BYTES * METRIC_ENTRIES);
    private final long metricsAddr = Pointer.nativeValue(metricsBuf);
    private final Memory small = new Memory(16);          // nvmlGpmSupport_t @0, a sample handle out @8
    private final long smallAddr = Pointer.nativeValue(small);
    private final Memory fieldBuf = new Memory((long) FIELD_BYTES * 2 * MAX_LINKS);
    private final long fieldAddr = Pointer.nativeValue(fieldBuf);

    /**
     * @param check the reader's return-code check: true on success, false for an absent reading (counting other
     *              failures); throws the reader's abort for a lost GPU or an uninitialised NVML
     */
    ActivityCounters(NvmlApi api, IntPredicate check) {
        this.api = api;
        this.check = check;
    }

    /** Per-GPU state, valid for one init. */
    static final class PerGpu {
        Boolean gpm;              // null: not asked yet this init
        long prevSample;          // nvmlGpmSample_t handles, 0 when not allocated
        long nextSample;
        boolean prevTaken;
        double prevTs;
        NvlinkMode nvlink = NvlinkMode.UNKNOWN;
        boolean gpmPcie;          // GPM gave PCIe rates since the last init: the watcher skips this GPU
    }

    enum NvlinkMode { UNKNOWN, ALL_LINKS_SCOPE, PER_LINK, NONE }

    /** This poll's activity of one GPU, null when none; {@code pcie}: the watcher's newest {tx, rx} KB/s, or null. */
    GpuActivity read(PerGpu s, long device, double ts, double[] pcie) {
        double[] gpm = Objects.requireNonNullElse(readGpm(s, device, ts), NO_GPM);
        long[] nvlink = readNvlink(s, device);
        Double pcieRx = null;
        Double pcieTx = null;
        boolean gpmGavePcie = !Double.isNaN(gpm[6]) && !Double.isNaN(gpm[5]);
        // Sticky until the next init: the watcher's 20 ms calls are not needed for this GPU again.
        s.gpmPcie |= gpmGavePcie;
        if (gpmGavePcie) {
            pcieTx = gpm[5] * MIB;
            pcieRx = gpm[6] * MIB;
        } else if (pcie != null) {
            pcieTx = Double.isNaN(pcie[0]) ? null : pcie[0] * KIB;
            pcieRx = Double.isNaN(pcie[1]) ? null : pcie[1] * KIB;
        }
        GpuActivity a = new GpuActivity(Double.isNaN(gpm[9]) ? null : gpm[9],
                percent(gpm[0]), percent(gpm[1]), percent(gpm[2]), percent(gpm[3]), percent(gpm[4]),
                pcieRx, pcieTx, rate(gpm[7]), rate(gpm[8]),
                nvlink == null || nvlink[1] < 0 ? null : nvlink[1] * KIB,
                nvlink == null || nvlink[0] < 0 ? null : nvlink[0] * KIB);
        return a.isEmpty() ? null : a;
    }

    /** GPM metrics in {@link #METRICS} order, then the interval; NaN where not given; null without an interval or GPM. */
    private double[] readGpm(PerGpu s, long device, double ts) {
        NvmlApi.Gpm gpm = api.gpm;
        if (gpm == null || Boolean.FALSE.equals(s.gpm)) {
            return null;
        }
        if (s.gpm == null && !enableGpm(s, device)) {
            return null;
        }
        if (s.prevTaken && ts - s.prevTs < MIN_GPM_WINDOW_SECONDS) {
            return null; // keep the older sample: the next poll's interval is long enough
        }
        int rc = gpm.sampleGet().call(device, s.nextSample);
        if (rc != NvmlApi.SUCCESS) {
            s.prevTaken = false;
            check.test(rc);
            return null;
        }
        double[] out = null;
        if (s.prevTaken) {
            out = metrics(s.prevSample, s.nextSample);
            if (out != null) {
                out[9] = ts - s.prevTs;
            }
        }
        long older = s.prevSample;
        s.prevSample = s.nextSample;
        s.nextSample = older;
        s.prevTaken = true;
        s.prevTs = ts;
        return out;
    }

    private double[] metrics(long sample1, long sample2) {
        metricsBuf.setInt(0, GPM_METRICS_GET_VERSION);
        metricsBuf.setInt(4, METRICS.length);
        metricsBuf.setLong(8, sample1);
        metricsBuf.setLong(16, sample2);
        for (int i = 0; i < METRICS.length; i++) {
            long off = METRICS_OFFSET + (long) METRIC_BYTES * i;
            metricsBuf.setInt(off, METRICS[i]);
            metricsBuf.setInt(off + 4, NvmlApi.NOT_SUPPORTED);
        }
        if (!check.test(api.gpm.metricsGet().call(metricsAddr))) {
            return null;
        }
        double[] out = new double[METRICS.length + 1];
        for (int i = 0; i < METRICS.length; i++) {
            long off = METRICS_OFFSET + (long) METRIC_BYTES * i;
            int rc = metricsBuf.getInt(off + 4);
            double v = metricsBuf.getDouble(off + 8);
            out[i] = rc == NvmlApi.SUCCESS && Double.isFinite(v) && v >= 0 ? v : Double.NaN;
        }
        return out;
    }

    /** Asks once whether the GPU has GPM; if so allocates its two samples. False when it cannot be used. */
    private boolean enableGpm(PerGpu s, long device) {
        NvmlApi.Gpm gpm = api.gpm;
        small.setInt(0, GPM_SUPPORT_VERSION);
        small.setInt(4, 0);
        int rc = gpm.querySupport().call(device, smallAddr);
        if (rc != NvmlApi.SUCCESS) {
            check.test(rc);     // a lost GPU or uninitialised NVML aborts here: then it is asked again
            s.gpm = false;      // not supported, or failed (counted): not asked again this init
            return false;
        }
        if (small.getInt(4) == 0) {
            s.gpm = false;
            return false;
        }
        s.prevSample = allocSample();
        s.nextSample = s.prevSample == 0 ? 0 : allocSample();
        if (s.nextSample == 0) {
            release(s);
            s.gpm = false;
            return false;
        }
        s.gpm = true;
        s.prevTaken = false;
        return true;
    }

    private long allocSample() {
        int rc = api.gpm.sampleAlloc().call(smallAddr + 8);
        if (rc != NvmlApi.SUCCESS) {
            check.test(rc);
            return 0;
        }
        return small.getLong(8);
    }

    /** Frees the GPU's GPM samples (idempotent); its GPM support is asked again after the next init. */
    void release(PerGpu s) {
        NvmlApi.Gpm gpm = api.gpm;
        if (gpm != null) {
            if (s.prevSample != 0) {
                gpm.sampleFree().call(s.prevSample);
            }
            if (s.nextSample != 0) {
                gpm.sampleFree().call(s.nextSample);
            }
        }
        s.prevSample = 0;
        s.nextSample = 0;
        s.prevTaken = false;
        s.gpm = null;
        s.gpmPcie = false;
        s.nvlink = NvlinkMode.UNKNOWN;
    }

    /** NVLink {tx, rx} KiB over all links (-1: not reported), null without NVLink; link by link if all-links fails. */
    private long[] readNvlink(PerGpu s, long device) {
        if (api.fieldValues == null || s.nvlink == NvlinkMode.NONE) {
            return null;
        }
        if (s.nvlink != NvlinkMode.PER_LINK) {
            setField(0, FI_NVLINK_THROUGHPUT_DATA_TX, SCOPE_ALL_LINKS);
            setField(1, FI_NVLINK_THROUGHPUT_DATA_RX, SCOPE_ALL_LINKS);
            if (!check.test(api.fieldValues.call(device, 2, fieldAddr))) {
                return null;
            }
            int txRc = fieldBuf.getInt(28);
            int rxRc = fieldBuf.getInt(FIELD_BYTES + 28);
            if (txRc == NvmlApi.SUCCESS || rxRc == NvmlApi.SUCCESS) {
                s.nvlink = NvlinkMode.ALL_LINKS_SCOPE;
                return new long[] {txRc == NvmlApi.SUCCESS ? fieldValue(0) : -1,
                    rxRc == NvmlApi.SUCCESS ? fieldValue(1) : -1};
            }
            if (txRc == NvmlApi.NOT_SUPPORTED && rxRc == NvmlApi.NOT_SUPPORTED) {
                s.nvlink = NvlinkMode.NONE; // a GPU without NVLink
                return null;
            }
            s.nvlink = NvlinkMode.PER_LINK;
        }
        for (int link = 0; link < MAX_LINKS; link++) {
            setField(2 * link, FI_NVLINK_THROUGHPUT_DATA_TX, link);
            setField(2 * link + 1, FI_NVLINK_THROUGHPUT_DATA_RX, link);
        }
        if (!check.test(api.fieldValues.call(device, 2 * MAX_LINKS, fieldAddr))) {
            return null;
        }
        long tx = -1;
        long rx = -1;
        for (int i = 0; i < 2 * MAX_LINKS; i++) {
            if (fieldBuf.getInt((long) FIELD_BYTES * i + 28) == NvmlApi.SUCCESS) {
                long v = fieldValue(i);
                if (i % 2 == 0) {
                    tx = Math.max(tx, 0) + v;
                } else {
                    rx = Math.max(rx, 0) + v;
                }
            }
        }
        if (tx < 0 && rx < 0) {
            s.nvlink = NvlinkMode.NONE;
            return null;
        }
        return new long[] {tx, rx};
    }

    private void setField(int i, int fieldId, int scope) {
        long off = (long) FIELD_BYTES * i;
        fieldBuf.setInt(off, fieldId);
        fieldBuf.setInt(off + 4, scope);
        fieldBuf.setInt(off + 28, NvmlApi.NOT_SUPPORTED);
    }

    /** The 8-byte value of entry i by its {@code nvmlValueType_t}, as an unsigned count (negative never). */
    private long fieldValue(int i) {
        long off = (long) FIELD_BYTES * i;
        int type = fieldBuf.getInt(off + 24);
        return switch (type) {
            case 0 -> (long) Math.max(0, fieldBuf.getDouble(off + 32));       // DOUBLE
            case 1, 5 -> fieldBuf.getInt(off + 32) & 0xFFFFFFFFL;             // UNSIGNED_INT, SIGNED_INT
            default -> Math.max(0, fieldBuf.getLong(off + 32));               // (UNSIGNED_)LONG(_LONG)
        };
    }

    private static Double percent(double v) {
        return Double.isNaN(v) ? null : Math.min(v, 100.0) / 100.0;
    }

    private static Double rate(double mibPerSecond) {
        return Double.isNaN(mibPerSecond) ? null : mibPerSecond * MIB;
    }
}
