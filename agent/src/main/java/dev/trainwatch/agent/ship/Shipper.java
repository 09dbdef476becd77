package dev.trainwatch.agent.ship;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;

/**
 * Delivers shipments to the collector on its own thread, strictly in the order they were submitted, so a slow or
 * absent collector never delays polling and nothing is sent twice out of order.
 *
 * <p>Shipments wait in memory while the collector keeps up. When a delivery fails for a reason that may pass
 * (unreachable, timeout, 5xx, 408, 429, 401/403 until the token is fixed) it and everything behind it go to the
 * {@link Spool} on disk, and the spool's oldest shipment is retried with exponential backoff and jitter until it is
 * taken; then the rest follow in order. Any other 4xx means the shipment itself is bad: it is logged in one line,
 * dropped and counted, and the queue moves on. The collector de-duplicates replayed batches by their seq.
 *
 * <p>Thread-safe: {@link #submit} from the polling thread, {@link #close} from any thread.
 */
public final class Shipper implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Shipper.class.getName());

    /** Shipments kept in memory before newer ones go straight to disk (a collector slower than the poll). */
    static final int MEMORY_LIMIT = 16;

    private enum Outcome { DELIVERED, REJECTED, RETRY }

    private final Transport transport;
    private final Spool spool;
    private final Backoff backoff;
    private final Sleeper sleeper;
    private final Object lock = new Object();
    private final Deque<Shipment> memory = new ArrayDeque<>();
    private final Thread thread;

    private long nextOrdinal;
    private long delivered;
    private long rejected;
    private int consecutiveFailures;
    private boolean closing;
    private long flushDeadlineNanos;
    private boolean sleeping;
    private String lastProblem;

    public Shipper(Transport transport, Spool spool, Backoff backoff, Sleeper sleeper) {
        this.transport = transport;
        this.spool = spool;
        this.backoff = backoff;
        this.sleeper = sleeper;
        this.nextOrdinal = spool.maxOrdinal() + 1;
        this.thread = new Thread(this::run, "trainwatch-shipper");
        this.thread.setDaemon(true);
    }

    /** Starts the delivery thread; shipments left in the spool by a previous agent go first. */
    public void start() {
        thread.start();
    }

    /** Queues a payload behind everything submitted before. Never blocks on the network. */
    public void submit(Payload payload) {
        submit(payload, null);
    }

    /**
     * As {@link #submit(Payload)}; {@code settled} runs once (on the delivery or the polling thread) when the
     * payload's fate no longer depends on this process: taken or refused by the collector, written to the spool on
     * disk, or dropped. It must be quick and must not call back into the shipper.
     */
    public void submit(Payload payload, Runnable settled) {
        synchronized (lock) {
            Shipment shipment = new Shipment(nextOrdinal++, payload.method(), payload.path(), payload.gzipBody(),
                    payload.what(), new java.util.concurrent.atomic.AtomicReference<>(settled));
            memory.addLast(shipment);
            // Once anything waits on disk, newer shipments go to disk too (order); a backlog in memory is bounded.
            if (!spool.isEmpty() || memory.size() > MEMORY_LIMIT) {
                spillMemory();
            }
            lock.notifyAll();
        }
    }

    /** Shipments waiting (memory and spool). */
    public long pending() {
        synchronized (lock) {
            return memory.size() + (long) spool.depth();
        }
    }

    public long spoolBytes() {
        return spool.bytes();
    }

    /** Shipments lost: dropped from a full spool, refused by the collector as bad (4xx), or not writable to disk. */
    public long dropped() {
        synchronized (lock) {
            return spool.droppedBatches() + rejected;
        }
    }

    /** True while the delivery thread runs (it ends only after {@link #close}). */
    public boolean alive() {
        return thread.isAlive();
    }

    /** Unexpected errors the delivery thread caught and survived, since start. */
    public long deliveryErrors() {
        synchronized (lock) {
            return deliveryErrors;
        }
    }

    /** Spool entries moved aside because they could not be replayed. */
    public long rejectedSpoolEntries() {
        return spool.rejectedEntries();
    }

    /** True while the spool directory cannot be written and shipments wait in memory. */
    public boolean spoolInMemory() {
        return spool.inMemory();
    }

    /** The current delivery problem, one line, or null. */
    public String problem() {
        synchronized (lock) {
            if (lastProblem != null) {
                return lastProblem;
            }
            String memory = spool.memoryReason();
            return memory == null ? null : "cannot write the spool directory " + spool.dir() + " (" + memory + ")";
        }
    }

    /** Shipments the collector took. */
    public long delivered() {
        synchronized (lock) {
            return delivered;
        }
    }

    /**
     * Stops: tries to deliver what is queued for up to {@code flush}, then writes the rest to the spool for the
     * next agent. Idempotent.
     */
    @Override
    public void close() {
        close(Duration.ofSeconds(5));
    }

    public void close(Duration flush) {
        synchronized (lock) {
            if (!closing) {
                closing = true;
                flushDeadlineNanos = System.nanoTime() + flush.toNanos();
            }
            if (sleeping) {
                thread.interrupt();
            }
            lock.notifyAll();
        }
        try {
            thread.join(Math.max(1, flush.toMillis() + 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (lock) {
            spillMemory();
        }
    }

    /**
     * The delivery thread: never ends while the process lives and {@link #close} was not called. Anything the loop
     * did not expect is caught, counted, logged once per kind, and the loop goes on after a pause.
     */
    private void run() {
        while (true) {
            try {
                if (deliverUntilClosed()) {
                    return;
                }
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof OutOfMemoryError)
                        && !(e instanceof StackOverflowError)) {
                    throw e; // the JVM itself is broken: nothing sane to go on with
                }
                Duration pause;
                synchronized (lock) {
                    deliveryErrors++;
                    pause = backoff.delay((int) Math.min(deliveryErrors, 10));
                    String kind = e.getClass().getName();
                    if (!kind.equals(lastErrorKind)) {
                        lastErrorKind = kind;
                        LOG.log(System.Logger.Level.ERROR, "delivery hit an unexpected error (" + e
                                + "); going on (errors so far: " + deliveryErrors + ")");
                    }
                    if (closing) {
                        spillMemorySafely();
                        return;
                    }
                }
                try {
                    sleeper.sleep(pause);
                } catch (InterruptedException interrupted) {
                    // close() cut the pause short; the loop sees closing.
                }
            }
        }
    }

    private void spillMemorySafely() {
        try {
            spillMemory();
        } catch (RuntimeException | Error ignored) {
            // Closing: what cannot be spooled is lost with the process.
        }
    }

    private long deliveryErrors;
    private String lastErrorKind;

    /** The delivery loop proper; returns true when closed. */
    private boolean deliverUntilClosed() {
        while (true) {
            Shipment next;
            boolean fromSpool;
            synchronized (lock) {
                while (memory.isEmpty() && spool.isEmpty() && !closing) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        // Only close() interrupts, and it sets closing first.
                    }
                }
                if (closing && (System.nanoTime() > flushDeadlineNanos || consecutiveFailures > 0
                        || (memory.isEmpty() && spool.isEmpty()))) {
                    spillMemory();
                    return true;
                }
                fromSpool = !spool.isEmpty();
                // Entries that cannot be replayed are moved aside by the spool itself; this never gives up.
                next = fromSpool ? spool.oldest() : memory.peekFirst();
                if (next == null) {
                    continue;
                }
            }
            Outcome outcome = deliver(next);
            Duration wait = null;
            boolean sleep = false;
            synchronized (lock) {
                switch (outcome) {
                    case DELIVERED -> {
                        delivered++;
                        next.settle();
                        if (consecutiveFailures > 0) {
                            LOG.log(System.Logger.Level.INFO, "collector reachable again; replaying "
                                    + spool.depth() + " spooled shipments");
                        }
                        consecutiveFailures = 0;
                        lastProblem = null;
                        forget(next, fromSpool);
                    }
                    case REJECTED -> {
                        rejected++;
                        next.settle();
                        forget(next, fromSpool);
                    }
                    case RETRY -> {
                        consecutiveFailures++;
                        spillMemory();
                        wait = backoff.delay(consecutiveFailures);
                        sleep = !closing;
                        sleeping = sleep;
                    }
                }
            }
            if (sleep) {
                try {
                    sleeper.sleep(wait);
                } catch (InterruptedException e) {
                    // close() cut the backoff short.
                }
                synchronized (lock) {
                    sleeping = false;
                    Thread.interrupted();
                }
            }
        }
    }

    private void forget(Shipment shipment, boolean fromSpool) {
        if (!fromSpool && memory.peekFirst() == shipment) {
            memory.removeFirst();
        } else {
            // From the spool, or spilled there from memory while it was in flight (a backlog): not again.
            spool.remove(shipment.ordinal());
        }
    }

    private Outcome deliver(Shipment shipment) {
        Transport.Response response;
        try {
            response = transport.send(shipment);
        } catch (IOException | RuntimeException e) {
            // A RuntimeException from the HTTP client (a malformed answer, a closed client) is a failed attempt too.
            problem("collector unreachable (" + describe(e) + "); spooling until it is back");
            return Outcome.RETRY;
        } catch (InterruptedException e) {
            return Outcome.RETRY;
        }
        int status = response.status();
        if (status >= 200 && status < 300) {
            return Outcome.DELIVERED;
        }
        if (status == 401 || status == 403) {
            problem("collector refused the token (HTTP " + status + "); check --token-file; spooling meanwhile");
            return Outcome.RETRY;
        }
        if (status >= 400 && status < 500 && status != 408 && status != 429) {
            LOG.log(System.Logger.Level.ERROR, "collector refused " + shipment.what() + " with HTTP " + status + ": "
                    + response.body() + " (dropped)");
            return Outcome.REJECTED;
        }
        problem("collector answered HTTP " + status + "; spooling and retrying");
        return Outcome.RETRY;
    }

    /** Logs a delivery problem once per streak, not once per retry. */
    private void problem(String message) {
        synchronized (lock) {
            if (!message.equals(lastProblem)) {
                lastProblem = message;
                LOG.log(System.Logger.Level.WARNING, message);
            }
        }
    }

    private static String describe(Exception e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message.lines().findFirst().orElse("");
    }

    /**
     * Moves every shipment waiting in memory to the spool, oldest first (which keeps them in memory, bounded, while
     * its directory cannot be written). Caller holds the lock.
     */
    private void spillMemory() {
        while (!memory.isEmpty()) {
            spool.append(memory.pollFirst());
        }
    }

    /** Waits until nothing is pending or the timeout passes; for tests and orderly shutdown. */
    public boolean awaitEmpty(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (pending() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
