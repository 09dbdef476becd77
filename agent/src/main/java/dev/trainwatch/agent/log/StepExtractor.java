package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * From one line segment of a log to a finished step event: strips ANSI codes, asks the parser, stamps the event
 * with the line's own timestamp (else the read time), takes the rank from a launcher prefix when the line has
 * none, derives a missing step time from consecutive timestamps, and drops repeats of the same step of the same
 * rank (a tqdm bar redrawn without progress). An event whose step time stays unknown is dropped: a step report
 * without a time tells the collector nothing it can compare. Not thread-safe; one per log.
 */
final class StepExtractor {

    private record Seen(long step, double ts) {
    }

    private final StepLineParser parser;
    private final ZoneId zone;
    private final Map<Integer, Seen> lastByRank = new HashMap<>();

    StepExtractor(StepLineParser parser, ZoneId zone) {
        this.parser = parser;
        this.zone = zone;
    }

    StepLineParser parser() {
        return parser;
    }

    /**
     * Parses one segment (a line, or one carriage-return frame of a line) and appends its step, if any, to
     * {@code out}.
     *
     * @param readTs unix seconds when the segment was read, used when the line carries no timestamp
     */
    void accept(String segment, double readTs, List<StepEvent> out) {
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
        if (previous != null && previous.step() == e.step()) {
            return;
        }
        Double time = e.timeS();
        if (time == null && previous != null && e.step() > previous.step() && when > previous.ts()) {
            time = (when - previous.ts()) / (e.step() - previous.step());
        }
        lastByRank.put(key, new Seen(e.step(), when));
        if (time == null) {
            return;
        }
        out.add(new StepEvent(e.step(), time, e.dataTimeS(), e.modelTimeS(), e.lmTimeS(), e.vaeTimeS(),
                e.intervalSteps(), e.samples(), e.loss(), e.lr(), e.gradNorm(), e.bucketHeight(), e.bucketWidth(),
                rank, when));
    }
}
