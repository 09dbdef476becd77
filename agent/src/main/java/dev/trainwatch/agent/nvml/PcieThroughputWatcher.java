package dev.trainwatch.agent.nvml;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads PCIe throughput on a daemon thread: each call blocks for the driver's 20 ms window. A round every
 * {@value #ROUND_MS} ms, skipping GPUs with GPM and those that answered NOT_SUPPORTED. Thread-safe.
 */
final class PcieThroughputWatcher {

    static final int TX = 0;                  // NVML_PCIE_UTIL_TX_BYTES
    static final int RX = 1;                  // NVML_PCIE_UTIL_RX_BYTES
    private static final long ROUND_MS = 1000;
    /** A reading older than this is not reported (the watcher stalled or the GPU stopped answering). */
    private static final long FRESH_NANOS = 5_000_000_000L;

    private final NvmlApi api;
    private final List<Long> devices;
    private final Set<Long> skip;
    private final AtomicLong failedReads;
    private final Map<Long, double[]> latest = new ConcurrentHashMap<>();   // device → {tx, rx, nanoTime}
    private final Thread thread;
    private volatile boolean running = true;

    private PcieThroughputWatcher(NvmlApi api, List<Long> devices, Set<Long> skip, AtomicLong failedReads) {
        this.api = api;
        this.devices = new ArrayList<>(devices);
        this.skip = skip;
        this.failedReads = failedReads;
        this.thread = new Thread(this::run, "trainwatch-pcie");
        this.thread.setDaemon(true);
    }

    /**
     * Starts the thread; null when the driver lacks the call or there is no GPU. {@code skip}: devices to pass over
     * (their rates come from GPM); the caller may change it at any time.
     */
    static PcieThroughputWatcher start(NvmlApi api, List<Pointer> handles, Set<Long> skip, AtomicLong failedReads) {
        if (api.pcieThroughput == null || handles.isEmpty()) {
            return null;
        }
        PcieThroughputWatcher w = new PcieThroughputWatcher(api, handles.stream().map(Pointer::nativeValue).toList(),
                skip, failedReads);
        w.thread.start();
        return w;
    }

    /** The newest {tx, rx} in KB/s (NaN for a counter the GPU does not give), or null when none is fresh. */
    double[] latest(long device) {
        double[] r = latest.get(device);
        return r == null || System.nanoTime() - (long) r[2] > FRESH_NANOS ? null : r;
    }

    /** Ends the thread and waits for it (never returns while a call may still use a handle). */
    void stop() {
        running = false;
        thread.interrupt();
        NvmlEventWatcher.joinUninterruptibly(thread);
    }

    private void run() {
        try (Memory out = new Memory(8)) {
            long addr = Pointer.nativeValue(out);
            while (running) {
                long start = System.nanoTime();
                for (int i = 0; i < devices.size() && running; i++) {
                    long dev = devices.get(i);
                    if (skip.contains(dev)) {
                        latest.remove(dev);
                        continue;
                    }
                    int txRc = api.pcieThroughput.call(dev, TX, addr);
                    double tx = txRc == NvmlApi.SUCCESS ? out.getInt(0) & 0xFFFFFFFFL : Double.NaN;
                    int rxRc = api.pcieThroughput.call(dev, RX, addr);
                    double rx = rxRc == NvmlApi.SUCCESS ? out.getInt(0) & 0xFFFFFFFFL : Double.NaN;
                    count(txRc);
                    count(rxRc);
                    if (Double.isNaN(tx) && Double.isNaN(rx)) {
                        latest.remove(dev);
                        if (txRc == NvmlApi.NOT_SUPPORTED && rxRc == NvmlApi.NOT_SUPPORTED) {
                            devices.remove(i--);   // no PCIe counters on this GPU: not asked again
                        }
                    } else {
                        latest.put(dev, new double[] {tx, rx, System.nanoTime()});
                    }
                }
                long rest = ROUND_MS - (System.nanoTime() - start) / 1_000_000L;
                if (rest > 0 && running) {
                    try {
                        Thread.sleep(rest);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }
    }

    /** Counts a failed read; absent readings, lost GPUs and a shut-down NVML are the poll's to report. */
    private void count(int rc) {
        if (rc != NvmlApi.SUCCESS && rc != NvmlApi.NOT_SUPPORTED && rc != NvmlApi.GPU_IS_LOST
                && rc != NvmlApi.UNINITIALIZED) {
            failedReads.incrementAndGet();
        }
    }
}
