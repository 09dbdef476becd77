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

/**
 * Reads a {@link StepSource} on a thread of its own, so reading a log can never hold up GPU polling: a slow disk,
 * a hung network file system, or a FIFO swapped in between the check and the open only stall this thread. The
 * agent's poll asks for a read and takes what it returns if it comes within {@link #FRESH_WAIT_NANOS} (a regular
 * file always does), else whatever was read since: {@link #poll()} never blocks on the file for longer.
 *
 * <p>A read that has not returned for {@link #stuckAfter} is reported by {@link #problem()}; when the path is a FIFO
 * by then (the open is waiting for a writer), the reader is released by opening the FIFO for writing once and
 * closing it, which ends the wait with an empty read, and the refusal of non-regular files takes over.
 *
 * <p>Lifecycle: {@link #start()} starts the daemon thread; {@link #close()} stops it without waiting for a read in
 * progress. Thread-safe.
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
    private long lost;
    /** Reads asked for by {@link #poll()}, and the newest request a finished read started after (under lock). */
    private long requested;
    private long served;
    /**
     * How long {@link #poll()} waits for a read it asked for: a regular file reads in far less, so the steps of a
     * poll are those of the file as it stands at the poll; a read that blocks (a FIFO, a hung mount) costs the poll
     * this much at most, and nothing once it counts as stuck.
     */
    static final long FRESH_WAIT_NANOS = 200_000_000L;

    /**
     * @param source     the log to read (owned: closed by {@link #close()})
     * @param period     how often to read
     * @param stuckAfter a read taking longer than this is reported as stuck
     */
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
                synchronized (lock) {
                    if (steps.size() + read.size() > MAX_BUFFERED) {
                        // The agent has not taken steps for a long time (it is stuck itself): keep the newest.
                        int drop = Math.min(steps.size(), steps.size() + read.size() - MAX_BUFFERED);
                        steps.subList(0, drop).clear();
                        lost += drop;
                    }
                    steps.addAll(read);
                    phases.addAll(announced);
                    if (checkpoint != null) {
                        readCheckpoint = checkpoint;
                    }
                }
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
            // Until the next period, or until a poll asks for a read.
            synchronized (lock) {
                long deadline = started + periodNanos;
                while (!closed && requested == serving) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        lock.wait(left / 1_000_000, (int) (left % 1_000_000));
                    } catch (InterruptedException e) {
                        // close() interrupts; the loop condition decides.
                        break;
                    }
                }
            }
        }
    }

    /**
     * Asks the reader for a read and waits (at most {@link #FRESH_WAIT_NANOS}, not at all while a read is stuck) for
     * one that started after the request to finish.
     */
    private void readNow() {
        if (!thread.isAlive() || reading && System.nanoTime() - readStartedNanos > FRESH_WAIT_NANOS) {
            return;
        }
        synchronized (lock) {
            long want = ++requested;
            lock.notifyAll();
            long deadline = System.nanoTime() + FRESH_WAIT_NANOS;
            while (served < want && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    lock.wait(left / 1_000_000, (int) (left % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Steps kept for the agent between two of its polls, at most. */
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

    /** Where reading stood when the steps last returned by {@link #poll()} had been read. */
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

    /** True while a read has been under way for longer than the stuck bound. */
    public boolean stuck() {
        return reading && System.nanoTime() - readStartedNanos > stuckAfterNanos;
    }

    /** Steps dropped because the agent did not take them. */
    public long lost() {
        synchronized (lock) {
            return lost;
        }
    }

    private volatile long releasedAtNanos;

    /** A read blocked in opening a FIFO ends once a writer opens it: open it for writing once, then close it. */
    private void releaseIfStuck() {
        Path path = source.file();
        if (!stuck() || path == null || System.nanoTime() - releasedAtNanos < stuckAfterNanos) {
            return;
        }
        releasedAtNanos = System.nanoTime();
        if (!isFifo(path)) {
            return;
        }
        Thread opener = new Thread(() -> {
            // The stuck reader is the FIFO's reader, so this open returns at once (and if the reader got away
            // meanwhile, only this throw-away thread waits).
            try (FileChannel ignored = FileChannel.open(path, StandardOpenOption.WRITE)) {
                LOG.log(System.Logger.Level.WARNING, "log file " + path + " is a FIFO; released the read waiting on it");
            } catch (IOException | RuntimeException e) {
                // Gone or replaced meanwhile: the next read sees what is there.
            }
        }, "trainwatch-log-release");
        opener.setDaemon(true);
        opener.start();
    }

    private static boolean isFifo(Path path) {
        try {
            return !Files.isRegularFile(path) && !Files.isDirectory(path)
                    && (((Integer) Files.getAttribute(path, "unix:mode")) & 0170000) == 0010000;
        } catch (IOException | RuntimeException e) {
            return false;
        }
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
        // A read still blocked is abandoned with its daemon thread; the process may exit regardless.
    }
}
