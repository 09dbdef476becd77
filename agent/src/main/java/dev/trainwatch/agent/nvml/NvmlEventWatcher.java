package dev.trainwatch.agent.nvml;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import dev.trainwatch.protocol.AgentEvent;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** Waits for NVML's critical events (XID, double-bit ECC) on a daemon thread; the wait times out every {@value #WAIT_MS} ms. */
final class NvmlEventWatcher {

    static final long XID_CRITICAL_ERROR = 0x8L;
    static final long DOUBLE_BIT_ECC_ERROR = 0x2L;
    private static final int WAIT_MS = 200;
    private static final long RETRY_BACKOFF_MS = 1000;

    private final NvmlApi api;
    private final Pointer set;
    private final Map<Long, String> uuidByHandle;
    private final Clock clock;
    private final Consumer<AgentEvent> sink;
    private final AtomicLong failedReads;
    private final Thread thread;
    private volatile boolean running = true;

    private NvmlEventWatcher(NvmlApi api, Pointer set, Map<Long, String> uuidByHandle, Clock clock,
                             Consumer<AgentEvent> sink, AtomicLong failedReads) {
        this.api = api;
        this.set = set;
        this.uuidByHandle = Map.copyOf(uuidByHandle);
        this.clock = clock;
        this.sink = sink;
        this.failedReads = failedReads;
        this.thread = new Thread(this::run, "trainwatch-nvml-events");
        this.thread.setDaemon(true);
    }

    /** Registers every GPU for critical events and starts the thread; null when the driver offers none. */
    static NvmlEventWatcher start(NvmlApi api, List<Pointer> handles, Map<Long, String> uuidByHandle, Clock clock,
                                  Consumer<AgentEvent> sink, AtomicLong failedReads) {
        if (api.eventSetCreate == null || api.registerEvents == null || api.eventSetWait == null
                || api.eventSetFree == null || handles.isEmpty()) {
            return null;
        }
        Pointer set;
        try (Memory out = new Memory(8)) {
            if (api.eventSetCreate.invokeInt(new Object[] {out}) != NvmlApi.SUCCESS) {
                failedReads.incrementAndGet();
                return null;
            }
            set = out.getPointer(0);
        }
        int registered = 0;
        for (Pointer h : handles) {
            // Some GPUs support XIDs but not ECC events: ask for both, then for XIDs alone.
            int rc = api.registerEvents.invokeInt(new Object[] {h, XID_CRITICAL_ERROR | DOUBLE_BIT_ECC_ERROR, set});
            if (rc != NvmlApi.SUCCESS) {
                rc = api.registerEvents.invokeInt(new Object[] {h, XID_CRITICAL_ERROR, set});
            }
            if (rc == NvmlApi.SUCCESS) {
                registered++;
            } else if (rc != NvmlApi.NOT_SUPPORTED) {
                failedReads.incrementAndGet();
            }
        }
        if (registered == 0) {
            api.eventSetFree.invokeInt(new Object[] {set});
            return null;
        }
        NvmlEventWatcher w = new NvmlEventWatcher(api, set, uuidByHandle, clock, sink, failedReads);
        w.thread.start();
        return w;
    }

    /** Ends the thread, then frees the event set (never while a wait may still use it). */
    void stop() {
        running = false;
        joinUninterruptibly(thread);
        api.eventSetFree.invokeInt(new Object[] {set});
    }

    /** Waits for {@code thread} to end, keeping an interrupt for the caller to see afterwards. */
    static void joinUninterruptibly(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        // nvmlEventData_t: device@0, eventType@8, eventData@16, gpuInstanceId@24, computeInstanceId@28
        try (Memory data = new Memory(32)) {
            while (running) {
                int rc = api.eventSetWait.invokeInt(new Object[] {set, data, WAIT_MS});
                if (rc == NvmlApi.SUCCESS) {
                    deliver(data);
                } else if (rc != NvmlApi.TIMEOUT) {
                    failedReads.incrementAndGet();
                    pause();
                }
            }
        }
    }

    private void deliver(Memory data) {
        double ts = clock.millis() / 1000.0;
        String uuid = uuidByHandle.get(Pointer.nativeValue(data.getPointer(0)));
        long type = data.getLong(8);
        long value = data.getLong(16);
        if (type == XID_CRITICAL_ERROR) {
            sink.accept(AgentEvent.xid(ts, uuid, value));
        } else if (type == DOUBLE_BIT_ECC_ERROR) {
            sink.accept(new AgentEvent(ts, "ecc_double_bit", uuid, null, null, "double-bit ECC error", null, null, null, null));
        }
    }

    private void pause() {
        long until = System.nanoTime() + RETRY_BACKOFF_MS * 1_000_000L;
        while (running && System.nanoTime() < until) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
