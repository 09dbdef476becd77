package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * From one line segment of a log to a finished step event: strips ANSI codes, asks the parser, stamps the event
 * with the line's own timestamp (else the read time), takes the rank from a launcher prefix when the line has
 * none, derives a missing step time from consecutive timestamps, and drops repeats of the same step of the same
 * rank (a tqdm bar redrawn without progress). An event whose step time stays unknown (or is not above zero, as
 * a rounded {@code 0.000} is) is dropped: a step report without a time tells the collector nothing it can
 * compare, and the collector refuses it. Optional fields outside the collector's accepted ranges are left out,
 * so one odd line can never get a whole batch refused. For a format that redraws a step ({@link
 * StepLineParser#redraws()}, tqdm bars) the step is held and the loss, learning rate and grad norm of its bar's
 * last frame kept (a frame at another rate is another process's bar, not a redraw), with the first frame's time; it
 * is sent when the next step appears or by {@link #flush}. Not thread-safe; one per log.
 */
final class StepExtractor {

    /** The last step line of a rank: its step and its time (the line's own time stamp, else the read time). */
    record Seen(long step, double ts) {
    }

    /**
     * What the extractor remembers between lines, to resume after a restart exactly where it stopped: each rank's
     * last step, and the stretch of the file (bumped each time a rank's step goes back: a new run appended to the
     * same file, or a run resumed from an earlier checkpoint).
     */
    record State(Map<Integer, Seen> lastByRank, int stretch) {
        State {
            lastByRank = Map.copyOf(lastByRank);
        }
    }

    /** The collector's limits for a step event (see its input validation): values outside are not sent. */
    private static final double ONE_DAY_S = 86_400;
    private static final long MAX_STEP = 1_000_000_000_000L;
    private static final double MAX_TS = 1e10;

    private final StepLineParser parser;
    private final ZoneId zone;
    private final Map<Integer, Seen> lastByRank = new HashMap<>();
    /** Redrawn formats: each rank's newest step, not sent yet, the read time of its first frame, its log time. */
    private final Map<Integer, Held> held = new LinkedHashMap<>();

    private record Held(StepEvent event, double readTs, double logTs) {
    }

    /** A held step is sent once no frame of a newer step came for this long (the redraws follow within ms). */
    static final double HOLD_SECONDS = 1.0;
    private int stretch;
    private String sourceBase;

    /** The state to save with a position in the file. */
    State state() {
        return new State(lastByRank, stretch);
    }

    /** Continues from a saved state (or, for a file read from its start after another, keeps the ranks). */
    void restore(State state) {
        lastByRank.clear();
        lastByRank.putAll(state.lastByRank());
        stretch = state.stretch();
    }

    /** Starts a new file: its stretches count from 0; each rank's last step is kept to time the next line. */
    void newFile(String base) {
        sourceBase = base;
        stretch = 0;
    }

    /** Names the file the lines come from (null: reports carry no source). */
    void sourceBase(String base) {
        sourceBase = base;
    }

    /** The source reports carry now: the file's id and the stretch within it. */
    String source() {
        return sourceBase == null ? null : sourceBase + "." + stretch;
    }

    StepExtractor(StepLineParser parser, ZoneId zone) {
        this.parser = parser;
        this.zone = zone;
    }

    StepLineParser parser() {
        return parser;
    }

    private String[] quickCheckSource;
    private ByteScan.Needle[] quickCheckNeedles;

    /**
     * As {@link #accept(String, double, List)} for a segment still in bytes: lines that cannot be step lines are
     * rejected before they are decoded, which saves the decoding and the garbage of most noise lines.
     */
    void accept(byte[] bytes, int offset, int length, double readTs, List<StepEvent> out) {
        accept(bytes, offset, length, readTs, out, null);
    }

    /**
     * As above; {@code logTimes}, when given, receives for each event added to {@code out} the time stamp of its
     * line, or NaN when the line had none.
     */
    void accept(byte[] bytes, int offset, int length, double readTs, List<StepEvent> out, List<Double> logTimes) {
        String[] required = parser.quickCheck();
        if (required != null) {
            if (required != quickCheckSource) {
                quickCheckSource = required;
                quickCheckNeedles = new ByteScan.Needle[required.length];
                for (int i = 0; i < required.length; i++) {
                    quickCheckNeedles[i] = ByteScan.Needle.of(required[i].getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!containsAny(bytes, offset, length, quickCheckNeedles)) {
                return;
            }
        }
        accept(new String(bytes, offset, length, StandardCharsets.UTF_8), readTs, out, logTimes);
    }

    private static boolean containsAny(byte[] bytes, int offset, int length, ByteScan.Needle[] needles) {
        for (ByteScan.Needle needle : needles) {
            if (ByteScan.contains(bytes, offset, length, needle)) {
                return true;
            }
        }
        return false;
    }

    /** {@code v} when it lies in [0, max], else null: what the collector accepts for these fields. */
    private static Double plausible(Double v, double max) {
        return v == null || !(v >= 0 && v <= max) ? null : v;
    }

    /**
     * A loss or grad norm as read: NaN and ±infinity pass (a diverged run says so), finite values beyond 1e30 are a
     * misread, not a reading.
     */
    private static Double reading(Double v) {
        return v == null || Double.isFinite(v) && Math.abs(v) > 1e30 ? null : v;
    }

    private static Integer plausible(Integer v, int min, int max) {
        return v == null || v < min || v > max ? null : v;
    }

    private static boolean containsAny(String s, String[] fragments) {
        for (String f : fragments) {
            if (s.indexOf(f) >= 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Parses one segment (a line, or one carriage-return frame of a line) and appends its step, if any, to
     * {@code out}.
     *
     * @param readTs unix seconds when the segment was read, used when the line carries no timestamp
     */
    void accept(String segment, double readTs, List<StepEvent> out) {
        accept(segment, readTs, out, null);
    }

    private void accept(String segment, double readTs, List<StepEvent> out, List<Double> logTimes) {
        String[] required = parser.quickCheck();
        if (required != null && !containsAny(segment, required)) {
            return;
        }
        String line = LogText.stripAnsi(segment);
        StepEvent e;
        try {
            e = parser.parse(line);
        } catch (RuntimeException bug) {
            // A parser must never take the tailer down over one odd line; losing that line is the lesser harm.
            return;
        }
        if (e == null || e.step() == null) {
            return;
        }
        Integer rank = e.rank() != null ? e.rank() : LogText.rankPrefix(line);
        Double ts = LogText.timestamp(line, zone);
        double when = ts != null ? ts : readTs;
        Integer key = rank == null ? -1 : rank;
        Seen previous = lastByRank.get(key);
        boolean redraws = parser.redraws();
        if (previous != null && previous.step() == e.step()) {
            Held h = redraws ? held.get(key) : null;
            // The same bar redrawn shows the same rate; another process's bar for the same step (several nodes'
            // bars interleaved in one output) shows its own, and the first one read stands.
            if (h != null && h.event().step().longValue() == e.step() && e.timeS() != null
                    && h.event().timeS() != null && Math.abs(e.timeS() - h.event().timeS()) < 1e-9) {
                held.put(key, new Held(lastFrame(h.event(), e), h.readTs(), h.logTs()));
            }
            return;
        }
        if (e.step() < 0 || e.step() > MAX_STEP) {
            return;
        }
        if (previous != null && e.step() < previous.step()) {
            // The counter went back: a new run in the same file, or a resume from an earlier checkpoint. Its steps
            // are new reports even where the numbers repeat, so they get a source of their own.
            stretch++;
            previous = null;
        }
        Double time = plausible(e.timeS(), ONE_DAY_S);
        if (time != null && time == 0) {
            time = null;
        }
        if (time == null && previous != null && e.step() > previous.step() && when > previous.ts()) {
            time = (when - previous.ts()) / (e.step() - previous.step());
        }
        lastByRank.put(key, new Seen(e.step(), when));
        if (time == null || time <= 0 || time > ONE_DAY_S) {
            return;
        }
        StepEvent built = new StepEvent(e.step(), time, plausible(e.dataTimeS(), ONE_DAY_S),
                plausible(e.modelTimeS(), ONE_DAY_S), plausible(e.lmTimeS(), ONE_DAY_S), plausible(e.vaeTimeS(), ONE_DAY_S),
                plausible(e.intervalSteps(), 1, 1_000_000), plausible(e.samples(), 1e9), reading(e.loss()),
                plausible(e.lr(), 1e6), reading(e.gradNorm()), plausible(e.bucketHeight(), 1, 100_000),
                plausible(e.bucketWidth(), 1, 100_000), plausible(rank, 0, 1_000_000),
                when >= 0 && when <= MAX_TS ? when : readTs, source());
        double logTs = ts != null && ts >= 0 && ts <= MAX_TS ? ts : Double.NaN;
        if (redraws) {
            Held before = held.remove(key);
            if (before != null) {
                emit(before.event(), before.logTs(), out, logTimes);
            }
            held.put(key, new Held(built, readTs, logTs));
        } else {
            emit(built, logTs, out, logTimes);
        }
    }

    private static void emit(StepEvent event, double logTs, List<StepEvent> out, List<Double> logTimes) {
        out.add(event);
        if (logTimes != null) {
            logTimes.add(logTs);
        }
    }

    /** A step's event with the loss, learning rate and grad norm of a later frame of the same step, where it has them. */
    private static StepEvent lastFrame(StepEvent first, StepEvent later) {
        Double loss = later.loss() != null ? reading(later.loss()) : first.loss();
        Double lr = later.lr() != null ? plausible(later.lr(), 1e6) : first.lr();
        Double grad = later.gradNorm() != null ? reading(later.gradNorm()) : first.gradNorm();
        return new StepEvent(first.step(), first.timeS(), first.dataTimeS(), first.modelTimeS(), first.lmTimeS(),
                first.vaeTimeS(), first.intervalSteps(), first.samples(), loss, lr, grad, first.bucketHeight(),
                first.bucketWidth(), first.rank(), first.ts(), first.source());
    }

    /**
     * Sends the held steps whose first frame was read at least {@value #HOLD_SECONDS} s before {@code readTs} (or all
     * of them with {@code Double.POSITIVE_INFINITY}): the newest step of a bar that has not moved on.
     */
    void flush(double readTs, List<StepEvent> out) {
        flush(readTs, out, null);
    }

    /** As above; {@code logTimes}, when given, receives each sent step's log time stamp (NaN without one). */
    void flush(double readTs, List<StepEvent> out, List<Double> logTimes) {
        for (Iterator<Held> it = held.values().iterator(); it.hasNext(); ) {
            Held h = it.next();
            if (readTs - h.readTs() >= HOLD_SECONDS) {
                emit(h.event(), h.logTs(), out, logTimes);
                it.remove();
            }
        }
    }
}
