package dev.trainwatch.agent.log;

import dev.trainwatch.agent.log.LogPositions.FileState;
import dev.trainwatch.agent.log.LogPositions.RankStep;
import dev.trainwatch.protocol.StepEvent;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * From one line segment to a step event: a step without a time above zero is dropped (the collector refuses it),
 * optional fields outside the collector's ranges are left out so one odd line cannot get a batch refused. A
 * redrawn step (tqdm) is held, keeping its last frame's loss/lr/grad norm, until the next step or {@link #flush}.
 */
final class StepExtractor {

    // the collector's input limits
    private static final double ONE_DAY_S = 86_400;
    private static final long MAX_STEP = 1_000_000_000_000L;
    private static final double MAX_TS = 1e10;

    private final StepLineParser parser;
    private final ZoneId zone;
    private final Map<Integer, RankStep> lastByRank = new HashMap<>();
    private final Map<Integer, Held> held = new LinkedHashMap<>();

    private record Held(StepEvent event, double readTs, double logTs) {
    }

    static final double HOLD_SECONDS = 1.0;
    /** Bumped each time a rank's step goes back. */
    private int stretch;
    private String sourceBase;

    /**
     * Ranks whose last step was read in another file: kept to time the next line, but a lower step in this file
     * is no new stretch (this file's source already tells its reports apart; bumping it would make the lines an
     * earlier agent sent from this file new to the collector).
     */
    private final Set<Integer> fromOtherFile = new HashSet<>();

    /** This file's own ranks. */
    List<RankStep> ranks() {
        return lastByRank.values().stream().filter(r -> !fromOtherFile.contains(r.rank()))
                .sorted(Comparator.comparingInt(RankStep::rank)).toList();
    }

    int stretch() {
        return stretch;
    }

    void restore(FileState saved) {
        lastByRank.clear();
        saved.ranks().forEach(r -> lastByRank.put(r.rank(), r));
        fromOtherFile.clear();
        stretch = saved.stretch();
    }

    /** Each rank's last step is kept to time the next line. */
    void newFile() {
        stretch = 0;
        fromOtherFile.addAll(lastByRank.keySet());
    }

    void sourceBase(String base) {
        sourceBase = base;
    }

    String source() {
        return sourceBase == null ? null : sourceBase + "." + stretch;
    }

    StepExtractor(StepLineParser parser, ZoneId zone) {
        this.parser = parser;
        this.zone = zone;
    }

    private String[] quickCheckSource;
    private ByteScan.Needle[] quickCheckNeedles;

    /** Non-step lines are rejected before decoding; {@code logTimes} gets each event's stamp (NaN: none). */
    void accept(byte[] bytes, int offset, int length, double readTs, List<StepEvent> out, List<Double> logTimes) {
        String[] required = parser.quickCheck();
        if (required != null) {
            if (required != quickCheckSource) {
                quickCheckSource = required;
                quickCheckNeedles = ByteScan.needles(required);
            }
            if (!ByteScan.containsAny(bytes, offset, length, quickCheckNeedles)) {
                return;
            }
        }
        accept(new String(bytes, offset, length, StandardCharsets.UTF_8), readTs, out, logTimes);
    }

    private static Double plausible(Double v, double max) {
        return v == null || !(v >= 0 && v <= max) ? null : v;
    }

    /** NaN and ±infinity pass (a diverged run says so); finite values beyond 1e30 are a misread. */
    private static Double reading(Double v) {
        return v == null || Double.isFinite(v) && Math.abs(v) > 1e30 ? null : v;
    }

    private static Integer plausible(Integer v, int min, int max) {
        return v == null || v < min || v > max ? null : v;
    }

    private void accept(String segment, double readTs, List<StepEvent> out, List<Double> logTimes) {
        String line = LogText.stripAnsi(segment);
        StepEvent e;
        try {
            e = parser.parse(line);
        } catch (RuntimeException bug) {
            // one odd line must never take the tailer down
            return;
        }
        if (e == null || e.step() == null) {
            return;
        }
        Integer rank = e.rank() != null ? e.rank() : LogText.rankPrefix(line);
        Double ts = LogText.timestamp(line, zone);
        double when = ts != null ? ts : readTs;
        Integer key = rank == null ? -1 : rank;
        RankStep previous = lastByRank.get(key);
        boolean redraws = parser.redraws();
        if (previous != null && previous.step() == e.step()) {
            Held h = redraws ? held.get(key) : null;
            // another process's bar for the same step shows its own rate; the first one read stands
            if (h != null && h.event().step().longValue() == e.step() && e.timeS() != null
                    && h.event().timeS() != null && Math.abs(e.timeS() - h.event().timeS()) < 1e-9) {
                held.put(key, new Held(lastFrame(h.event(), e), h.readTs(), h.logTs()));
            }
            return;
        }
        if (e.step() < 0 || e.step() > MAX_STEP) {
            return;
        }
        if (previous != null && e.step() < previous.step() && !fromOtherFile.contains(key)) {
            // a new run in the same file, or a resume: new reports even where the numbers repeat
            stretch++;
            previous = null;
        }
        Double time = e.timeS() != null && e.timeS() > 0 && e.timeS() <= ONE_DAY_S ? e.timeS() : null;
        if (time == null && previous != null && e.step() > previous.step() && when > previous.ts()) {
            time = (when - previous.ts()) / (e.step() - previous.step());
        }
        lastByRank.put(key, new RankStep(key, e.step(), when));
        fromOtherFile.remove(key);
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
        logTimes.add(logTs);
    }

    private static StepEvent lastFrame(StepEvent first, StepEvent later) {
        Double loss = later.loss() != null ? reading(later.loss()) : first.loss();
        Double lr = later.lr() != null ? plausible(later.lr(), 1e6) : first.lr();
        Double grad = later.gradNorm() != null ? reading(later.gradNorm()) : first.gradNorm();
        return new StepEvent(first.step(), first.timeS(), first.dataTimeS(), first.modelTimeS(), first.lmTimeS(),
                first.vaeTimeS(), first.intervalSteps(), first.samples(), loss, lr, grad, first.bucketHeight(),
                first.bucketWidth(), first.rank(), first.ts(), first.source());
    }

    /** Sends held steps first read at least {@value #HOLD_SECONDS} s ago (all with +infinity). */
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
