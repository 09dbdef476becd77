package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.protocol.StepEvent;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * What the fleet tells its {@link FleetListener}s, queued under the fleet's lock in order and delivered after it is
 * released, one call at a time: on the caller's thread ({@link #drain()}, the default) or on the outbox's own thread
 * ({@link #startOwnThread()}, the collector's way, so no caller waits for a listener). Steps applied are always told
 * on the caller's thread ({@link FleetListener#onStepsApplied}).
 */
final class Outbox {
    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);
    /** A listener failure is logged with its stack at most this often; the others are counted. */
    private static final long FAILURE_LOG_MILLIS = 60_000;

    private final List<FleetListener> listeners = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<Consumer<FleetListener>> queue = new LinkedBlockingQueue<>();
    /** Steps applied, told by {@link #drain()} on a caller's thread whether or not the own thread runs. */
    private final Queue<Consumer<FleetListener>> stepCalls = new ConcurrentLinkedQueue<>();
    private final Object dispatchLock = new Object();
    /** Notifications queued, and delivered (to every listener), since start. */
    private final AtomicLong queued = new AtomicLong();
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile long lastFailureLogged = Long.MIN_VALUE / 2;
    private volatile Thread thread;
    private volatile boolean stopping;

    void addListener(FleetListener listener) {
        listeners.add(Objects.requireNonNull(listener));
    }

    /** @param observed whether the run was ever seen training: listeners that notify people hear only of those */
    void anomaly(String runId, Anomaly a, boolean raised, boolean observed) {
        add(l -> {
            if (observed || !l.notifiesPeople()) {
                if (raised) {
                    l.onAnomalyRaised(runId, a);
                } else {
                    l.onAnomalyResolved(runId, a);
                }
            }
        });
    }

    /** Whether any listener uses run summaries ({@link FleetListener#wantsRunChanges()}). */
    boolean wantsRunChanges() {
        return listeners.stream().anyMatch(FleetListener::wantsRunChanges);
    }

    void changed(RunSummary summary) {
        add(l -> l.onRunChanged(summary));
    }

    void ended(RunSummary summary) {
        add(l -> l.onRunEnded(summary));
    }

    void stepsApplied(String runId, List<StepEvent> steps) {
        if (!steps.isEmpty()) {
            stepCalls.add(l -> l.onStepsApplied(runId, steps));
        }
    }

    private void add(Consumer<FleetListener> call) {
        queued.incrementAndGet();
        queue.add(call);
    }

    /** Queued notifications not yet delivered. */
    long backlog() {
        return queued.get() - delivered.get();
    }

    /**
     * Tells the steps applied so far, then delivers what else is queued unless the own thread does, on the calling
     * thread. A caller returns only once the steps it queued were told, by it or by another caller.
     */
    void drain() {
        synchronized (stepCalls) {
            Consumer<FleetListener> call;
            while ((call = stepCalls.poll()) != null) {
                callEach(call);
            }
        }
        if (thread != null || queue.isEmpty()) {
            return;
        }
        synchronized (dispatchLock) {
            if (thread != null) {
                return;
            }
            Consumer<FleetListener> call;
            while ((call = queue.poll()) != null) {
                deliver(call);
            }
        }
    }

    private void deliver(Consumer<FleetListener> call) {
        callEach(call);
        delivered.incrementAndGet();
    }

    private void callEach(Consumer<FleetListener> call) {
        for (FleetListener l : listeners) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                failures.incrementAndGet();
                long now = System.nanoTime() / 1_000_000;
                if (now - lastFailureLogged >= FAILURE_LOG_MILLIS) {
                    lastFailureLogged = now;
                    LOG.log(System.Logger.Level.ERROR, "fleet listener failed (" + failures.get()
                            + " failures so far; logged at most once a minute)", e);
                }
            }
        }
    }

    /** From now on, delivers on a thread of its own (idempotent). What was queued before is delivered there too. */
    synchronized void startOwnThread() {
        if (thread != null) {
            return;
        }
        Thread t = new Thread(this::run, "trainwatch-fleet-outbox");
        t.setDaemon(true);
        synchronized (dispatchLock) {
            thread = t; // drain() stops delivering on callers' threads from here
        }
        t.start();
    }

    private void run() {
        while (!stopping || !queue.isEmpty()) {
            Consumer<FleetListener> call;
            try {
                call = queue.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (call != null) {
                try {
                    deliver(call);
                } catch (Throwable e) { // an Error in a listener must not stop delivery for good
                    failures.incrementAndGet();
                    delivered.incrementAndGet();
                    LOG.log(System.Logger.Level.ERROR, "fleet listener failed", e);
                }
            }
        }
    }

    /** Waits at most {@code timeout} until everything queued before this call is delivered; false if late. */
    boolean awaitDelivered(Duration timeout) {
        if (thread == null) {
            drain();
            return true;
        }
        if (Thread.currentThread() == thread) {
            return true; // a listener calling back into the fleet: what it waits for is queued behind it
        }
        long target = queued.get();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (delivered.get() < target) {
            if (System.nanoTime() >= deadline) {
                return false;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Delivers what is queued (at most {@code timeout}), then stops the own thread; callers deliver again. */
    void stop(Duration timeout) {
        Thread t = thread;
        if (t == null) {
            drain();
            return;
        }
        awaitDelivered(timeout);
        stopping = true;
        try {
            t.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (dispatchLock) {
            // From here on, what is queued (the last summaries on shutdown) is delivered on the caller's thread.
            thread = null;
        }
        drain();
    }
}
