package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.EventKind;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;

/**
 * Follows a run's log and turns its step lines into {@link StepEvent}s; each {@link #poll()} stats once and reads
 * only what was appended (at most {@value #MAX_BYTES_PER_POLL} bytes). Survives rotation (the old file is read to its
 * end first), truncation, partial writes, over-long lines, and missing or non-regular paths (never opened: a FIFO
 * blocks). With {@link #keepPositionsIn} it resumes from what was committed ({@link LogPositions}).
 * With {@link LineTime#READ} the newest line of a poll gets the read time and older ones keep their distance by the
 * log's stamps, so a log written in another zone or on a skewed clock still gives right times. Not thread-safe,
 * except {@link #problem()} and {@link #commit}.
 */
public final class LogTailer implements StepSource {

    /** Where a step's time comes from: when it was read (live), or the line's own stamp (replay). */
    public enum LineTime {
        READ, LOG
    }

    static final int HEAD_BYTES = 4096;

    public static final long DEFAULT_HISTORY_BYTES = 8L << 20;
    public static final int DEFAULT_MAX_LINE_BYTES = 1 << 20;
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
    private String head;
    private long position;
    private boolean attachedOnce;
    private volatile String problem;
    private boolean closed;

    private final LineTime lineTime;
    private LogPositions positions;
    private final LinkedHashMap<String, LogPositions.FileState> known = new LinkedHashMap<>();
    private boolean catchUp;
    private double modifiedAgo = Double.NaN;

    private List<StepEvent> pending;
    private final List<Double> pendingLogTs = new ArrayList<>();
    private double readTs;
    private final LineSplitter.Sink sink;

    /**
     * A tailer for {@code file} (need not exist yet) in {@code format} (a preset or a regex, see docs/LOGS.md; null
     * is auto); stamps without an offset are read in the default zone. Throws IllegalArgumentException for a bad regex.
     */
    public static LogTailer open(Path file, String format, Clock clock) {
        return open(file, format, clock, DEFAULT_HISTORY_BYTES, LineTime.READ);
    }

    public static LogTailer open(Path file, String format, Clock clock, long historyBytes, LineTime lineTime) {
        return new LogTailer(file, StepLineParsers.forFormat(format), clock, ZoneId.systemDefault(), historyBytes,
                DEFAULT_MAX_LINE_BYTES, lineTime);
    }

    /** Tests and replays: the clock's zone, {@link LineTime#LOG}. */
    public LogTailer(Path file, StepLineParser parser, Clock clock, long historyBytes, int maxLineBytes) {
        this(file, parser, clock, clock.getZone(), historyBytes, maxLineBytes, LineTime.LOG);
    }

    /** {@code zone}: of stamps without an offset; {@code historyBytes}: of the file's end read on attach. */
    public LogTailer(Path file, StepLineParser parser, Clock clock, ZoneId zone, long historyBytes,
            int maxLineBytes, LineTime lineTime) {
        this.lineTime = Objects.requireNonNull(lineTime, "lineTime");
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
            if (head == null) {
                identifyFile();
            }
            int before = pending.size();
            extractor.accept(bytes, offset, length, readTs, pending, pendingLogTs);
            if (pending.size() > before) {
                openPhase = null;
                return; // a step line announces no phase
            }
            PhaseLines.Phase phase = PhaseLines.of(openPhase, bytes, offset, length, readTs, zone);
            if (phase != null) {
                announce(this.lineTime == LineTime.READ ? phase.at(readTs) : phase);
            }
        };
    }

    private final ZoneId zone;
    private static final int MAX_PENDING_EVENTS = 64;
    /** Seconds of the log between two progress events of one phase: a bar redraws many times a second. */
    static final double PROGRESS_INTERVAL_SECONDS = 10;
    private String openPhase;
    private double openPhaseSentTs = Double.NEGATIVE_INFINITY;
    private PhaseProgress openPhaseProgress;
    private long oomSkips;
    private final List<AgentEvent> events = new ArrayList<>();

    /**
     * Queues {@code phase} unless it repeats the open one: a start-up phase once, a bar at most every
     * {@value #PROGRESS_INTERVAL_SECONDS} s and at its last frame (once for Sana's repeated 19/19 sampling bars).
     */
    private void announce(PhaseLines.Phase phase) {
        AgentEvent event;
        if (PhaseLines.OOM_SKIPPED.equals(phase.kind())) {
            oomSkips++;
            event = new AgentEvent(phase.ts(), EventKind.OOM_SKIPPED.wireName(), null, null, null,
                    "the trainer caught a CUDA OOM and skipped the batch", null, null, null, oomSkips);
        } else {
            PhaseProgress p = phase.progress();
            boolean news = p != null && phase.finished() && (openPhaseProgress == null
                    || p.done() != openPhaseProgress.done() || !Objects.equals(p.total(), openPhaseProgress.total()));
            if (phase.kind().equals(openPhase) && (p == null ? PhaseLines.isStartUp(phase.kind())
                    : openPhaseProgress != null && !news && phase.ts() - openPhaseSentTs < PROGRESS_INTERVAL_SECONDS)) {
                return;
            }
            openPhase = phase.kind();
            openPhaseSentTs = phase.ts();
            openPhaseProgress = p;
            event = new AgentEvent(phase.ts(), EventKind.PHASE.wireName(), null, null, null, phase.kind(), null, null,
                    phase.progress(), null);
        }
        synchronized (this) {
            if (events.size() < MAX_PENDING_EVENTS) {
                events.add(event);
            }
        }
    }

    @Override
    public synchronized List<AgentEvent> drainEvents() {
        List<AgentEvent> out = List.copyOf(events);
        events.clear();
        return out;
    }

    public Path file() {
        return file;
    }

    public long skippedLongLines() {
        return splitter.droppedSegments();
    }

    @Override
    public List<StepEvent> poll() {
        if (closed) {
            return List.of();
        }
        pending = new ArrayList<>();
        pendingLogTs.clear();
        readTs = clock.millis() / 1000.0;
        catchUp = false;
        step();
        extractor.flush(readTs, pending, pendingLogTs);
        List<StepEvent> out = pending;
        pending = null;
        if (lineTime == LineTime.READ && !out.isEmpty()) {
            out = anchoredAtReadTime(out);
        }
        return out.isEmpty() ? List.of() : out;
    }

    private List<StepEvent> anchoredAtReadTime(List<StepEvent> events) {
        // mtime is on the wall clock: its age, not its time, carries over (a log that stopped long ago is old)
        double anchor = catchUp && modifiedAgo > 0 ? readTs - modifiedAgo : readTs;
        double newest = pendingLogTs.stream().mapToDouble(Double::doubleValue).filter(t -> !Double.isNaN(t)).max()
                .orElse(Double.NEGATIVE_INFINITY);
        List<StepEvent> out = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            double logTs = pendingLogTs.get(i);
            double ts = Double.isNaN(logTs) ? anchor : anchor - Math.max(0, newest - logTs);
            out.add(events.get(i).withTs(Math.max(0, ts)));
        }
        return out;
    }

    @Override
    public void keepPositionsIn(Path dir) {
        LogPositions store = new LogPositions(dir);
        List<LogPositions.FileState> saved = store.load();
        synchronized (known) {
            positions = store;
            for (int i = saved.size() - 1; i >= 0; i--) {
                known.put(saved.get(i).fileKey(), saved.get(i));
            }
        }
    }

    @Override
    public Object checkpoint() {
        if (positions == null) {
            return null;
        }
        if (channel != null && fileKey != null) {
            remember(currentState());
        }
        synchronized (known) {
            List<LogPositions.FileState> newestFirst = new ArrayList<>(known.values());
            Collections.reverse(newestFirst);
            return List.copyOf(newestFirst);
        }
    }

    @Override
    public void commit(Object checkpoint) {
        LogPositions store = positions;
        if (store != null && checkpoint instanceof List<?> states) {
            @SuppressWarnings("unchecked")
            List<LogPositions.FileState> typed = (List<LogPositions.FileState>) states;
            store.save(typed);
        }
    }

    private LogPositions.FileState currentState() {
        long consumed = position - splitter.pendingBytes();
        return new LogPositions.FileState(fileKey.toString(), head, file.toString(), Math.max(0, consumed),
                splitter.skipping(), extractor.stretch(), extractor.ranks(), clock.millis());
    }

    private void remember(LogPositions.FileState state) {
        synchronized (known) {
            known.remove(state.fileKey());
            known.put(state.fileKey(), state);
            while (known.size() > LogPositions.MAX_FILES) {
                known.remove(known.keySet().iterator().next());
            }
        }
    }

    private void identifyFile() {
        if (channel == null || head != null) {
            return;
        }
        head = readHead(channel);
        if (head != null) {
            extractor.sourceBase(sourceBase(fileKey, head));
        }
    }

    /** A hash of the file's first line (or first {@value #HEAD_BYTES} bytes); null while it has none. */
    static String readHead(FileChannel channel) {
        ByteBuffer start = ByteBuffer.allocate(HEAD_BYTES);
        try {
            while (start.hasRemaining() && channel.read(start, start.position()) > 0) {
                continue;
            }
        } catch (IOException e) {
            return null;
        }
        int n = start.position();
        int end = ByteScan.indexOfEither(start.array(), 0, n, (byte) '\n', (byte) '\r') + 1;
        if (end == 0 && n < HEAD_BYTES) {
            return null;
        }
        return sha256(start.array(), end == 0 ? n : end).substring(0, 16);
    }

    /** Device, inode and first line: the same after an agent restart. */
    static String sourceBase(Object key, String head) {
        byte[] id = (key + "\n" + head).getBytes(StandardCharsets.UTF_8);
        return sha256(id, id.length).substring(0, 12);
    }

    private static String sha256(byte[] bytes, int length) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(bytes, 0, length);
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
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
                finishFile();
            } else if (attrs == null) {
                // renamed away, not yet recreated: the writer may still write to the old file
                readAvailable(MAX_BYTES_PER_POLL);
                problem = null;
                return;
            }
        }
        if (attrs == null) {
            problem = "log file " + file + " does not exist yet; waiting for it";
            return;
        }
        if (!attrs.isRegularFile()) {
            // never opened: a FIFO blocks until a writer comes
            problem = "log file " + file + " is " + (attrs.isDirectory() ? "a directory" : specialKind(file))
                    + ", not a regular file; waiting for a regular file";
            return;
        }
        modifiedAgo = (System.currentTimeMillis() - attrs.lastModifiedTime().toMillis()) / 1000.0;
        if (channel == null && !attachedOnce && positions != null) {
            finishRotatedAway(attrs.fileKey());
        }
        if (channel == null && !openChannel(attrs)) {
            return;
        }
        long size = attrs.size();
        if (size < position) {
            position = 0;
            splitter.reset(false);
            head = null;
            extractor.sourceBase(null);
        }
        if (size > position) {
            readAvailable(MAX_BYTES_PER_POLL);
        }
    }

    static final int MAX_ROTATION_SCAN = 1_000;

    /** After a restart: reads the rest of the file rotated away meanwhile (found by inode, e.g. train.log.1). */
    private void finishRotatedAway(Object currentKey) {
        LogPositions.FileState last;
        synchronized (known) {
            last = known.values().stream().filter(s -> file.toString().equals(s.path()))
                    .reduce((a, b) -> b.updated() >= a.updated() ? b : a).orElse(null);
        }
        if (last == null) {
            return;
        }
        attachedOnce = true;
        if (currentKey != null && last.fileKey().equals(currentKey.toString())) {
            return;
        }
        Path rotated = null;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(file.toAbsolutePath().getParent())) {
            int seen = 0;
            for (Path entry : entries) {
                if (++seen > MAX_ROTATION_SCAN) {
                    break;
                }
                BasicFileAttributes a;
                try {
                    a = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                } catch (IOException e) {
                    continue;
                }
                if (a.isRegularFile() && a.fileKey() != null && a.fileKey().toString().equals(last.fileKey())) {
                    rotated = entry;
                    if (a.size() <= last.position()) {
                        return;
                    }
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            return;
        }
        if (rotated == null) {
            return;
        }
        try {
            channel = FileChannel.open(rotated, StandardOpenOption.READ);
        } catch (IOException e) {
            return;
        }
        String rotatedHead = readHead(channel);
        if (last.head() != null && !last.head().equals(rotatedHead)) {
            closeChannel();
            return;
        }
        fileKey = last.fileKey();
        head = rotatedHead;
        position = last.position();
        splitter.reset(last.midLine());
        extractor.restore(last);
        extractor.sourceBase(head == null ? null : sourceBase(fileKey, head));
        finishFile();
        extractor.newFile();
    }

    /** What a file that is neither regular nor a directory is, by its {@code unix:mode}. */
    static String specialKind(Path file) {
        try {
            int type = ((Integer) Files.getAttribute(file, "unix:mode")) & 0170000;
            return switch (type) {
                case 0010000 -> "a FIFO";
                case 0020000 -> "a character device";
                case 0060000 -> "a block device";
                case 0140000 -> "a socket";
                default -> "not a plain file";
            };
        } catch (IOException | RuntimeException e) {
            return "a special file";
        }
    }

    private boolean openChannel(BasicFileAttributes attrs) {
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (IOException e) {
            problem = describe(e);
            return false;
        }
        Object key = attrs.fileKey();
        boolean sameFile = key != null && key.equals(fileKey);
        String newHead = readHead(channel);
        LogPositions.FileState saved;
        synchronized (known) {
            saved = key == null || sameFile ? null : known.get(key.toString());
        }
        long size = attrs.size();
        if (saved != null && (saved.head() == null || saved.head().equals(newHead)) && saved.position() <= size) {
            attachedOnce = true;
            position = saved.position();
            splitter.reset(saved.midLine());
            extractor.restore(saved);
            catchUp = position < size;
        } else if (!attachedOnce) {
            attachedOnce = true;
            position = Math.max(0, size - historyBytes);
            splitter.reset(position > 0 && !followsNewline(position));
            extractor.newFile();
            catchUp = position < size;
        } else if (!sameFile) {
            position = 0;
            splitter.reset(false);
            extractor.newFile();
            catchUp = size > 0;
        }
        fileKey = key;
        head = newHead;
        extractor.sourceBase(head == null || key == null ? null : sourceBase(key, head));
        problem = null;
        return true;
    }

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
            closeChannel();
        }
    }

    static String permissionDenied(Path file) {
        return "cannot read log file " + file + ": permission denied; give the agent's user read access to it (and"
                + " search access to its directories), or run the agent with CAP_DAC_READ_SEARCH as its systemd unit"
                + " does";
    }

    private String describe(IOException e) {
        return e instanceof AccessDeniedException ? permissionDenied(file)
                : "cannot read log file " + file + ": " + Errors.reason(e);
    }

    /** Reads the open file to its end, remembers where it stopped, and lets it go. */
    private void finishFile() {
        readAvailable(Long.MAX_VALUE);
        splitter.finish(sink);
        if (positions != null && fileKey != null) {
            remember(currentState());
        }
        closeChannel();
        fileKey = null;
        head = null;
        position = 0;
    }

    private void closeChannel() {
        Errors.closeQuietly(channel); // read-only: nothing lost
        channel = null;
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
