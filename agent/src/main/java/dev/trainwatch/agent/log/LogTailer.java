package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Follows a training run's log file and turns its step lines into {@link StepEvent}s.
 *
 * <p>Lifecycle: {@link #open} does no I/O; every {@link #poll()} (the agent loop calls it about once a second,
 * from one thread) checks the file with one {@code stat} and reads only what was appended. On the first
 * successful open it reads the recent past — the last {@code historyBytes} of the file, from the first complete
 * line — so a run attached mid-way has history at once. It then survives:
 * <ul>
 *   <li>rotation (the path now names another file, by inode/file key): the old file is read to its end, its last
 *       unterminated line counted as complete, then the new file is read from its start; while the path is
 *       missing after a rename the old file keeps being read;</li>
 *   <li>truncation (size below the read position, e.g. {@code copytruncate} or {@code > file}): reading restarts
 *       at 0;</li>
 *   <li>partial writes: an unterminated tail waits for its newline (or the next {@code \r} of a progress bar);</li>
 *   <li>very long lines: a line over {@code maxLineBytes} is skipped to its end without buffering it;</li>
 *   <li>a missing or unreadable file: {@link #problem()} says so in one line and each poll tries again.</li>
 * </ul>
 * Steps get the timestamp of their line's logger prefix when it has one, else the poll's time from the
 * injected {@link Clock}. Prefixes without an offset are local time (Python's asctime): the factories read them
 * in the machine's default zone, since the agent runs where the training writes its log; the constructors take
 * the zone explicitly. One poll reads at most
 * {@value #MAX_BYTES_PER_POLL} bytes so a huge backlog cannot stall the agent loop; the rest follows next poll.
 * Not thread-safe. {@link #close()} releases the file.
 */
public final class LogTailer implements StepSource {

    /** Default amount of history read on attach. */
    public static final long DEFAULT_HISTORY_BYTES = 8L << 20;
    /** Default cap on one line; longer lines are skipped. */
    public static final int DEFAULT_MAX_LINE_BYTES = 1 << 20;
    /** Most bytes one poll reads. */
    public static final long MAX_BYTES_PER_POLL = 16L << 20;

    private static final int READ_CHUNK = 256 * 1024;

    private final Path file;
    private final Clock clock;
    private final long historyBytes;
    private final StepExtractor extractor;
    private final LineSplitter splitter;
    private final ByteBuffer buffer = ByteBuffer.allocate(READ_CHUNK);

    private FileChannel channel;
    private Object fileKey;
    private long position;
    private boolean attachedOnce;
    private String problem;
    private boolean closed;

    private List<StepEvent> pending;
    private double readTs;
    private final LineSplitter.Sink sink;

    /**
     * Creates a tailer for {@code file} in {@code format}, reading the last {@value #DEFAULT_HISTORY_BYTES} bytes
     * on attach and skipping lines over {@value #DEFAULT_MAX_LINE_BYTES} bytes. The file need not exist yet.
     *
     * @param file   the run's log ({@code train_log.log}, or the captured stdout/stderr)
     * @param format {@code auto}, {@code pixart}, {@code sana}, {@code dit}, {@code opensora}, {@code accelerate}, or a
     *               regular expression with named groups ({@code step} required; see docs/LOGS.md); null means
     *               {@code auto}
     * @param clock  the time source for steps whose line has no timestamp ({@code Clock.systemUTC()} is fine:
     *               timestamps without an offset are read in {@link ZoneId#systemDefault()})
     * @throws IllegalArgumentException with a one-line message for an invalid regular expression
     */
    public static LogTailer open(Path file, String format, Clock clock) {
        return open(file, format, clock, DEFAULT_HISTORY_BYTES);
    }

    /** As {@link #open(Path, String, Clock)}, reading {@code historyBytes} of history on attach (0 for none). */
    public static LogTailer open(Path file, String format, Clock clock, long historyBytes) {
        return new LogTailer(file, StepLineParsers.forFormat(format), clock, ZoneId.systemDefault(), historyBytes,
                DEFAULT_MAX_LINE_BYTES);
    }

    /** As the full constructor, reading timestamps without an offset in the clock's zone. */
    public LogTailer(Path file, StepLineParser parser, Clock clock, long historyBytes, int maxLineBytes) {
        this(file, parser, clock, clock.getZone(), historyBytes, maxLineBytes);
    }

    /**
     * Full control, for tests and benchmarks.
     *
     * @param zone         the zone of logger timestamps that carry no offset
     * @param historyBytes bytes of the file's end read on attach (0 for none, {@code Long.MAX_VALUE} for all)
     * @param maxLineBytes longer lines are skipped
     */
    public LogTailer(Path file, StepLineParser parser, Clock clock, ZoneId zone, long historyBytes,
            int maxLineBytes) {
        this.file = Objects.requireNonNull(file, "file");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (historyBytes < 0) {
            throw new IllegalArgumentException("history size must not be negative");
        }
        this.historyBytes = historyBytes;
        this.extractor = new StepExtractor(Objects.requireNonNull(parser, "parser"), Objects.requireNonNull(zone, "zone"));
        this.splitter = new LineSplitter(maxLineBytes);
        this.zone = zone;
        this.sink = (bytes, offset, length) -> {
            int before = pending.size();
            extractor.accept(bytes, offset, length, readTs, pending);
            if (pending.size() > before) {
                return; // a step line announces no phase
            }
            PhaseLines.Phase phase = PhaseLines.of(bytes, offset, length, readTs, zone);
            if (phase != null && phases.size() < MAX_PENDING_PHASES) {
                phases.add(phase);
            }
        };
    }

    private final ZoneId zone;
    private static final int MAX_PENDING_PHASES = 64;
    private final List<PhaseLines.Phase> phases = new java.util.ArrayList<>();

    /** Checkpoint and evaluation phases the log announced since the previous call: kind and unix seconds. */
    @Override
    public synchronized List<java.util.Map.Entry<String, Double>> drainPhases() {
        List<java.util.Map.Entry<String, Double>> out = new java.util.ArrayList<>(phases.size());
        for (PhaseLines.Phase p : phases) {
            out.add(java.util.Map.entry(p.kind(), p.ts()));
        }
        phases.clear();
        return out;
    }

    /** The file followed. */
    public Path file() {
        return file;
    }

    /** The preset in use ({@code auto} until detection settles on one). */
    public String formatName() {
        return extractor.parser().name();
    }

    /** Lines skipped for exceeding the length cap since creation. */
    public long skippedLongLines() {
        return splitter.droppedSegments();
    }

    @Override
    public List<StepEvent> poll() {
        if (closed) {
            return List.of();
        }
        pending = new ArrayList<>();
        readTs = clock.millis() / 1000.0;
        step();
        extractor.flush(readTs, pending);
        List<StepEvent> out = pending;
        pending = null;
        return out.isEmpty() ? List.of() : out;
    }

    private void step() {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            attrs = null;
        } catch (IOException e) {
            problem = describe(e);
            return;
        }
        if (channel != null) {
            boolean replaced = attrs != null && attrs.fileKey() != null && !attrs.fileKey().equals(fileKey);
            if (replaced) {
                // Rotated: whatever the writer put in the old file before switching still counts.
                readAvailable(Long.MAX_VALUE);
                splitter.finish(sink);
                closeChannel();
                fileKey = null;
                position = 0;
            } else if (attrs == null) {
                // Renamed away and not yet recreated: the writer may still be writing to the old file.
                readAvailable(MAX_BYTES_PER_POLL);
                problem = null;
                return;
            }
        }
        if (attrs == null) {
            problem = "log file " + file + " does not exist yet; waiting for it";
            return;
        }
        if (attrs.isDirectory()) {
            problem = "log file " + file + " is a directory, not a file";
            return;
        }
        if (channel == null && !openChannel(attrs)) {
            return;
        }
        long size = attrs.size();
        if (size < position) {
            // Truncated in place: the run (or logrotate's copytruncate) started the file over.
            position = 0;
            splitter.reset(false);
        }
        if (size > position) {
            readAvailable(MAX_BYTES_PER_POLL);
        }
    }

    private boolean openChannel(BasicFileAttributes attrs) {
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (AccessDeniedException e) {
            problem = "cannot read log file " + file + ": permission denied";
            return false;
        } catch (IOException e) {
            problem = describe(e);
            return false;
        }
        Object key = attrs.fileKey();
        if (!attachedOnce) {
            attachedOnce = true;
            long size = attrs.size();
            position = Math.max(0, size - historyBytes);
            splitter.reset(position > 0 && !followsNewline(position));
        } else if (key == null || !key.equals(fileKey)) {
            position = 0;
            splitter.reset(false);
        }
        fileKey = key;
        problem = null;
        return true;
    }

    /** True when the byte before {@code at} ends a line, so history can start exactly at {@code at}. */
    private boolean followsNewline(long at) {
        ByteBuffer one = ByteBuffer.allocate(1);
        try {
            return channel.read(one, at - 1) == 1 && (one.get(0) == '\n' || one.get(0) == '\r');
        } catch (IOException e) {
            return false;
        }
    }

    private void readAvailable(long budget) {
        long remaining = budget;
        try {
            while (remaining > 0) {
                buffer.clear();
                if (remaining < buffer.capacity()) {
                    buffer.limit((int) remaining);
                }
                int n = channel.read(buffer, position);
                if (n <= 0) {
                    break;
                }
                position += n;
                remaining -= n;
                splitter.feed(buffer.array(), 0, n, sink);
            }
            problem = null;
        } catch (IOException e) {
            problem = describe(e);
            // Keep file key and position: a transient error resumes where it stopped.
            closeChannel();
        }
    }

    private String describe(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "cannot read log file " + file + ": permission denied";
        }
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return "cannot read log file " + file + ": " + fse.getReason();
        }
        String message = e.getMessage();
        return "cannot read log file " + file + ": " + (message == null ? e.getClass().getSimpleName() : message);
    }

    private void closeChannel() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // Closing a read-only channel cannot lose data; nothing to report.
            }
            channel = null;
        }
    }

    @Override
    public String problem() {
        return problem;
    }

    @Override
    public void close() {
        closed = true;
        closeChannel();
    }
}
