package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.EventKind;
import dev.trainwatch.protocol.PhaseProgress;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
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
 *   <li>a missing or unreadable file: {@link #problem()} says so in one line and each poll tries again;</li>
 *   <li>a path that is not a regular file (a FIFO, a device, a directory) is refused with one line without opening
 *       it (opening a FIFO blocks until a writer comes), and read once a regular file is back.</li>
 * </ul>
 * With {@link #keepPositionsIn} the tailer resumes from what was committed ({@link #checkpoint()}, {@link
 * #commit}) for a file it has read before — after a restart, or a symlink swapped back — instead of reading
 * the recent past again; see {@link LogPositions}. Every step carries a {@linkplain StepEvent#source() source}:
 * the file's identity and the stretch of it, so that the collector counts a step once whatever is read again.
 *
 * <p>Time ({@link LineTime}): by default ({@link LineTime#READ}, what the agent uses) a step's time is when it was
 * read, and the log's own time stamps serve only for the intervals between its lines: of the lines one poll reads,
 * the newest gets the read time and the older ones keep their distance to it (on the first read of a file the
 * anchor is moved back by the age of its last modification, so a log that stopped long ago is not taken for a live
 * one; the age is measured on the file system's clock, the wall clock). A log
 * written in another time zone, or on a machine whose clock is off, then still gives the right times. With {@link
 * LineTime#LOG} (a replay, when the user says so) the lines' own time stamps are the times. Prefixes without an
 * offset are local time (Python's asctime): the factories read them in the machine's default zone; the
 * constructors take the zone explicitly. Steps whose line has no time stamp get the read time. One poll reads at most
 * {@value #MAX_BYTES_PER_POLL} bytes so a huge backlog cannot stall the agent loop; the rest follows next poll.
 * Not thread-safe, except {@link #problem()} and {@link #commit}, which any thread may call. {@link #close()}
 * releases the file.
 */
public final class LogTailer implements StepSource {

    /** Where a step's time comes from. */
    public enum LineTime {
        /** The time the agent read the line; the log's time stamps only for intervals (live tailing). */
        READ,
        /** The line's own time stamp (replaying a finished log whose times are right). */
        LOG
    }

    /** Bytes of a file's start whose first line identifies it. */
    static final int HEAD_BYTES = 4096;

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
    private String head;
    private long position;
    private boolean attachedOnce;
    private volatile String problem;
    private boolean closed;

    private final LineTime lineTime;
    private LogPositions positions;
    /** The files read so far, by file key; the current one's entry is refreshed by {@link #checkpoint()}. */
    private final LinkedHashMap<String, LogPositions.FileState> known = new LinkedHashMap<>();
    private boolean catchUp;
    /** Seconds since the file's last modification, by the file system's (wall) clock, at the last stat. */
    private double modifiedAgo = Double.NaN;

    private List<StepEvent> pending;
    private final List<Double> pendingLogTs = new ArrayList<>();
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
        return open(file, format, clock, historyBytes, LineTime.READ);
    }

    /** As {@link #open(Path, String, Clock, long)}, with the steps' times from {@code lineTime}. */
    public static LogTailer open(Path file, String format, Clock clock, long historyBytes, LineTime lineTime) {
        return new LogTailer(file, StepLineParsers.forFormat(format), clock, ZoneId.systemDefault(), historyBytes,
                DEFAULT_MAX_LINE_BYTES, lineTime);
    }

    /**
     * As the full constructor, reading timestamps without an offset in the clock's zone, with the lines' own
     * time stamps as the steps' times ({@link LineTime#LOG}: tests and replays of captured logs).
     */
    public LogTailer(Path file, StepLineParser parser, Clock clock, long historyBytes, int maxLineBytes) {
        this(file, parser, clock, clock.getZone(), historyBytes, maxLineBytes, LineTime.LOG);
    }

    /** As the full constructor with {@link LineTime#LOG}. */
    public LogTailer(Path file, StepLineParser parser, Clock clock, ZoneId zone, long historyBytes,
            int maxLineBytes) {
        this(file, parser, clock, zone, historyBytes, maxLineBytes, LineTime.LOG);
    }

    /**
     * Full control, for tests and benchmarks.
     *
     * @param zone         the zone of logger timestamps that carry no offset
     * @param historyBytes bytes of the file's end read on attach (0 for none, {@code Long.MAX_VALUE} for all)
     * @param maxLineBytes longer lines are skipped
     * @param lineTime     where steps' times come from
     */
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
                identifyFile(); // the file's first line is complete now: it names the file
            }
            int before = pending.size();
            extractor.accept(bytes, offset, length, readTs, pending, pendingLogTs);
            if (pending.size() > before) {
                openPhase = null;
                return; // a step line announces no phase
            }
            PhaseLines.Phase phase = PhaseLines.of(bytes, offset, length, readTs, zone);
            if (phase == null && openPhase != null && !openPhase.startsWith("checkpoint")) {
                phase = PhaseLines.barOf(openPhase, bytes, offset, length, readTs, zone);
            }
            if (phase != null) {
                announce(this.lineTime == LineTime.READ ? phase.at(readTs) : phase);
            }
        };
    }

    private final ZoneId zone;
    private static final int MAX_PENDING_EVENTS = 64;
    /** Seconds of the log between two progress events of one phase: a bar redraws many times a second. */
    static final double PROGRESS_INTERVAL_SECONDS = 10;
    /** The phase announced last, until a step line; null when none. */
    private String openPhase;
    private double openPhaseSentTs = Double.NEGATIVE_INFINITY;
    private PhaseProgress openPhaseProgress;
    private long oomSkips;
    private final List<AgentEvent> events = new ArrayList<>();

    /**
     * Queues {@code phase}'s event unless it repeats the open phase: a start-up phase without progress is announced
     * once, a bar's progress at most every {@value #PROGRESS_INTERVAL_SECONDS} s and at its last frame (once for
     * a run of finished bars alike, as Sana's 19/19 sampling bar per validation image).
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

    /** Phases (with their progress) and caught OOMs the log announced since the previous call; no run id yet. */
    @Override
    public synchronized List<AgentEvent> drainEvents() {
        List<AgentEvent> out = List.copyOf(events);
        events.clear();
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

    /**
     * The steps of one poll with read times: the newest line gets the read time (on a catch-up, the file's last
     * modification if earlier), older ones keep their distance to it by their own time stamps.
     */
    private List<StepEvent> anchoredAtReadTime(List<StepEvent> events) {
        double anchor = readTs;
        if (catchUp && modifiedAgo > 0) {
            // The file's time is the file system's wall clock: its age, not its time, carries over to this clock.
            anchor -= modifiedAgo;
        }
        double newest = Double.NEGATIVE_INFINITY;
        for (double t : pendingLogTs) {
            if (!Double.isNaN(t) && t > newest) {
                newest = t;
            }
        }
        List<StepEvent> out = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            double logTs = pendingLogTs.get(i);
            double ts = Double.isNaN(logTs) ? anchor : anchor - Math.max(0, newest - logTs);
            out.add(events.get(i).withTs(Math.max(0, ts)));
        }
        return out;
    }

    /**
     * Resumes from the positions committed in {@code dir} (see {@link LogPositions}) and commits there from now
     * on. Call before the first {@link #poll()}; without it nothing is kept and every start reads the recent past.
     */
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

    /**
     * Where reading stands after the steps returned so far: an opaque snapshot for {@link #commit} once those
     * steps are delivered or spooled; null when nothing is kept.
     */
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

    /** Saves a snapshot from {@link #checkpoint()}; a restart resumes after the steps it covers. */
    @Override
    public void commit(Object checkpoint) {
        LogPositions store = positions;
        if (store != null && checkpoint instanceof List<?> states) {
            @SuppressWarnings("unchecked")
            List<LogPositions.FileState> typed = (List<LogPositions.FileState>) states;
            store.save(typed);
        }
    }

    /** The current file's state: after the last complete line consumed (a partial line is read again). */
    private LogPositions.FileState currentState() {
        boolean midLine = splitter.skipping();
        long consumed = midLine ? position : position - splitter.pendingBytes();
        StepExtractor.State state = extractor.state();
        return new LogPositions.FileState(fileKey.toString(), head, file.toString(), Math.max(0, consumed), midLine,
                state.stretch(), LogPositions.ranks(state), clock.millis());
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

    /** Reads the file's first line (up to {@value #HEAD_BYTES} bytes) and names the file's steps after it. */
    private void identifyFile() {
        if (channel == null || head != null) {
            return;
        }
        head = readHead(channel);
        if (head != null) {
            extractor.sourceBase(sourceBase(fileKey, head));
        }
    }

    /** A hash of the first line of the file (or of its first {@value #HEAD_BYTES} bytes), null while it has none. */
    static String readHead(FileChannel channel) {
        ByteBuffer start = ByteBuffer.allocate(HEAD_BYTES);
        try {
            while (start.hasRemaining() && channel.read(start, start.position()) > 0) {
                // read until full or the end of the file
            }
        } catch (IOException e) {
            return null;
        }
        int n = start.position();
        int end = -1;
        for (int i = 0; i < n; i++) {
            byte b = start.get(i);
            if (b == '\n' || b == '\r') {
                end = i + 1;
                break;
            }
        }
        if (end < 0 && n < HEAD_BYTES) {
            return null;
        }
        return sha256(start.array(), end < 0 ? n : end).substring(0, 16);
    }

    /** The id of a file's steps: its device, inode and first line; the same after an agent restart. */
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
                // Rotated: whatever the writer put in the old file before switching still counts.
                readAvailable(Long.MAX_VALUE);
                splitter.finish(sink);
                if (positions != null && fileKey != null) {
                    remember(currentState());
                }
                closeChannel();
                fileKey = null;
                head = null;
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
        if (!attrs.isRegularFile()) {
            // Never opened: opening a FIFO blocks until a writer comes, a device may never answer.
            problem = "log file " + file + " is " + kindOf(attrs) + ", not a regular file; waiting for a regular file";
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
            // Truncated in place: the run (or logrotate's copytruncate) started the file over. Its first line may be
            // another now, so it is named again once it has one.
            position = 0;
            splitter.reset(false);
            head = null;
            extractor.sourceBase(null);
        }
        if (size > position) {
            readAvailable(MAX_BYTES_PER_POLL);
        }
    }

    /** Most directory entries looked at for a file rotated away while the agent was not running. */
    static final int MAX_ROTATION_SCAN = 1_000;

    /**
     * After a restart: when the path now names another file than the one being read when the agent stopped (the
     * log was rotated meanwhile), reads the rest of that file — found by its device and inode in the same directory,
     * e.g. {@code train.log.1} — then takes the new file from its start. Lines written just before a rotation are
     * not lost because the agent happened to be down.
     */
    private void finishRotatedAway(Object currentKey) {
        LogPositions.FileState last = null;
        synchronized (known) {
            for (LogPositions.FileState s : known.values()) {
                if (s.path() != null && s.path().equals(file.toString())
                        && (last == null || s.updated() >= last.updated())) {
                    last = s;
                }
            }
        }
        if (last == null) {
            return;
        }
        attachedOnce = true; // the file at the path now follows one read before: read it from its start
        if (currentKey != null && last.fileKey().equals(currentKey.toString())) {
            return; // not rotated: openChannel resumes it
        }
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null) {
            return;
        }
        Path rotated = null;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
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
                        return; // nothing was written after what was consumed
                    }
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            return;
        }
        if (rotated == null) {
            return; // deleted meanwhile (logrotate's maxage, or a delete): nothing left to read
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
        extractor.restore(LogPositions.extractorState(last));
        extractor.sourceBase(head == null ? null : sourceBase(fileKey, head));
        readAvailable(Long.MAX_VALUE);
        splitter.finish(sink);
        remember(currentState());
        closeChannel();
        fileKey = null;
        head = null;
        position = 0;
        extractor.newFile(null);
    }

    private String kindOf(BasicFileAttributes attrs) {
        if (attrs.isDirectory()) {
            return "a directory";
        }
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
        } catch (AccessDeniedException e) {
            problem = permissionDenied(file);
            return false;
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
        if (saved != null && (saved.head() == null ? saved.position() <= size : saved.head().equals(newHead))
                && saved.position() <= size) {
            // Read before (a restart, or a symlink swapped back): go on after the last line consumed.
            attachedOnce = true;
            position = saved.position();
            splitter.reset(saved.midLine());
            extractor.restore(LogPositions.extractorState(saved));
            catchUp = position < size;
        } else if (!attachedOnce) {
            attachedOnce = true;
            position = Math.max(0, size - historyBytes);
            splitter.reset(position > 0 && !followsNewline(position));
            extractor.newFile(null);
            catchUp = position < size;
        } else if (!sameFile) {
            position = 0;
            splitter.reset(false);
            extractor.newFile(null);
            catchUp = size > 0;
        }
        fileKey = key;
        head = newHead;
        extractor.sourceBase(head == null || key == null ? null : sourceBase(key, head));
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

    /** The line for a log the agent may not read, with what to do about it. */
    static String permissionDenied(Path file) {
        return "cannot read log file " + file + ": permission denied; give the agent's user read access to it (and"
                + " search access to its directories), or run the agent with CAP_DAC_READ_SEARCH as its systemd unit"
                + " does";
    }

    private String describe(IOException e) {
        if (e instanceof AccessDeniedException) {
            return permissionDenied(file);
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
