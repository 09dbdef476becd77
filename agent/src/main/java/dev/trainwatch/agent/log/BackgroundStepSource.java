package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Reads a {@link StepSource} on its own thread, so a slow disk, hung mount or FIFO never holds up GPU polling;
 * {@link #poll()} waits at most {@link #FRESH_WAIT_NANOS} for a fresh read. A read stuck opening a FIFO is released
 * by opening it for writing once. Thread-safe.
 */
public final class BackgroundStepSource implements StepSource {

    private static final System.Logger LOG = System.getLogger(BackgroundStepSource.class.getName());

    private final StepSource source;
    private final long periodNanos;
    private final long stuckAfterNanos;
    private final Thread thread;
    private final Object lock = new Object();

    private final List<StepEvent> steps = new ArrayList<>();
    private final List<AgentEvent> phases = new ArrayList<>();
    private Object readCheckpoint;
    private Object drainedCheckpoint;
    private volatile long readStartedNanos;
    private volatile boolean reading;
    private volatile boolean closed;
    private long requested;
    private long served;
    /** Steps were dropped since the agent last took them (warned once). */
    private volatile boolean dropping;
    /** A regular file reads in far less; a blocked read costs a poll this much at most, nothing once stuck. */
    static final long FRESH_WAIT_NANOS = 200_000_000L;

    public BackgroundStepSource(StepSource source, Duration period, Duration stuckAfter) {
        this.source = source;
        this.periodNanos = period.toNanos();
        this.stuckAfterNanos = stuckAfter.toNanos();
        this.thread = new Thread(this::run, "trainwatch-log");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (!closed) {
            long started = System.nanoTime();
            long serving;
            synchronized (lock) {
                serving = requested;
            }
            readStartedNanos = started;
            reading = true;
            try {
                List<StepEvent> read = source.poll();
                List<AgentEvent> announced = source.drainEvents();
                Object checkpoint = source.checkpoint();
                int dropped = 0;
                synchronized (lock) {
                    if (steps.size() + read.size() > MAX_BUFFERED) {
                        dropped = Math.min(steps.size(), steps.size() + read.size() - MAX_BUFFERED);
                        steps.subList(0, dropped).clear();
                    }
                    steps.addAll(read);
                    phases.addAll(announced);
                    if (checkpoint != null) {
                        readCheckpoint = checkpoint;
                    }
                }
                if (dropped > 0 && !dropping) {
                    // Once until the agent takes steps again: a stalled poll loop must not flood the log.
                    LOG.log(System.Logger.Level.WARNING, "the agent did not take the log's steps in time: dropped the"
                            + " oldest " + dropped + " of more than " + MAX_BUFFERED + " read; those steps are lost");
                }
                dropping = dropped > 0 || dropping;
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof OutOfMemoryError)) {
                    throw e;
                }
                LOG.log(System.Logger.Level.ERROR, "reading the log failed (" + e + "); trying again");
            } finally {
                reading = false;
                synchronized (lock) {
                    served = Math.max(served, serving);
                    lock.notifyAll();
                }
            }
            synchronized (lock) {
                awaitLocked(started + periodNanos, () -> closed || requested != serving);
            }
        }
    }

    private void readNow() {
        if (!thread.isAlive() || reading && System.nanoTime() - readStartedNanos > FRESH_WAIT_NANOS) {
            return;
        }
        synchronized (lock) {
            long want = ++requested;
            lock.notifyAll();
            if (!awaitLocked(System.nanoTime() + FRESH_WAIT_NANOS, () -> served >= want || closed)) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits on the lock (held) until {@code done} or the deadline; false when interrupted. */
    private boolean awaitLocked(long deadlineNanos, BooleanSupplier done) {
        long left;
        while (!done.getAsBoolean() && (left = deadlineNanos - System.nanoTime()) > 0) {
            try {
                lock.wait(left / 1_000_000, (int) (left % 1_000_000));
            } catch (InterruptedException e) {
                return false;
            }
        }
        return true;
    }

    static final int MAX_BUFFERED = 100_000;

    @Override
    public List<StepEvent> poll() {
        releaseIfStuck();
        readNow();
        synchronized (lock) {
            drainedCheckpoint = readCheckpoint;
            if (steps.isEmpty()) {
                return List.of();
            }
            List<StepEvent> out = List.copyOf(steps);
            steps.clear();
            dropping = false;
            return out;
        }
    }

    @Override
    public List<AgentEvent> drainEvents() {
        synchronized (lock) {
            List<AgentEvent> out = List.copyOf(phases);
            phases.clear();
            return out;
        }
    }

    @Override
    public Object checkpoint() {
        synchronized (lock) {
            return drainedCheckpoint;
        }
    }

    @Override
    public void commit(Object checkpoint) {
        source.commit(checkpoint);
    }

    @Override
    public void keepPositionsIn(Path dir) {
        source.keepPositionsIn(dir);
    }

    @Override
    public Path file() {
        return source.file();
    }

    @Override
    public String problem() {
        if (stuck()) {
            return "reading log file " + source.file() + " has not returned for "
                    + (System.nanoTime() - readStartedNanos) / 1_000_000_000L + " s (a FIFO, or a hung file system?)";
        }
        return source.problem();
    }

    public boolean stuck() {
        return reading && System.nanoTime() - readStartedNanos > stuckAfterNanos;
    }

    private volatile long releasedAtNanos;

    private void releaseIfStuck() {
        Path path = source.file();
        if (!stuck() || path == null || System.nanoTime() - releasedAtNanos < stuckAfterNanos) {
            return;
        }
        releasedAtNanos = System.nanoTime();
        if (!"a FIFO".equals(LogTailer.specialKind(path))) {
            return;
        }
        Thread opener = new Thread(() -> {
            // the stuck reader is the FIFO's, so this open returns at once
            try (FileChannel ignored = FileChannel.open(path, StandardOpenOption.WRITE)) {
                LOG.log(System.Logger.Level.WARNING, "log file " + path + " is a FIFO; released the read waiting on it");
            } catch (IOException | RuntimeException e) {
                // gone or replaced meanwhile: the next read sees what is there
            }
        }, "trainwatch-log-release");
        opener.setDaemon(true);
        opener.start();
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        if (!reading) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (!reading) {
            source.close();
        }
    }
}
