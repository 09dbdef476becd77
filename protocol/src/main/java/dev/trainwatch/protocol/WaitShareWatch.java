package dev.trainwatch.protocol;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Watches a run's step reports for a data wait that has just become large, per rank: an agent holding polls sends
 * the reports {@code data_starvation} reads and every poll for a few seconds after, so the verdict is not delayed.
 * Not thread-safe: one poll thread.
 */
public final class WaitShareWatch {

    /** A report that waits for data more than this share of its step is news: the collector's default warning share. */
    public static final double SHARE = 0.30;

    /** Starved reports in a row are news until they cover this span (the collector's default median span). */
    public static final double SPAN_SECONDS = 30;

    /**
     * The collector's default confirmation of a single starved report by the GPUs: idle gaps for this long after it.
     */
    public static final double GPU_CONFIRM_SECONDS = 8;

    /** How long after a report turned starved every poll goes at once: the GPUs' confirmation and two polls. */
    public static final double HURRY_SECONDS = GPU_CONFIRM_SECONDS + 2;

    /** Ranks remembered at most: a log of more is forgotten and starts again (one hurried stretch more). */
    private static final int MAX_RANKS = 4096;

    /** What a poll's new reports said, the most pressing of them. */
    public enum Seen {
        /** No report above the share, or only reports of ranks whose starved reports already cover the span. */
        NOTHING,
        /** A rank's report above the share after others above it, still within the span the collector reads. */
        ABOVE,
        /** A report above the share whose rank's previous report was not (or that rank's first report). */
        TURNED_ABOVE;

        /** Whether the poll that read these reports should be sent at once. */
        public boolean urgent() {
            return this != NOTHING;
        }
    }

    /** A rank's starved reports in a row: how many, and the seconds of steps they cover. */
    private static final class Streak {
        int reports;
        double seconds;
    }

    private final Map<Integer, Streak> streaks = new HashMap<>();

    /** Reads a poll's new reports, oldest first; a run starved for the whole span costs nothing more. */
    public Seen read(List<StepEvent> steps) {
        Seen seen = Seen.NOTHING;
        for (StepEvent e : steps) {
            double share = e == null ? Double.NaN : e.waitShare();
            if (Double.isNaN(share)) {
                continue;
            }
            if (streaks.size() >= MAX_RANKS) {
                streaks.clear();
            }
            Streak streak = streaks.computeIfAbsent(e.rank() == null ? -1 : e.rank(), r -> new Streak());
            if (!(share > SHARE)) {
                streak.reports = 0;
                streak.seconds = 0;
                continue;
            }
            boolean news = streak.reports < 2 || streak.seconds < SPAN_SECONDS;
            streak.reports = Math.min(streak.reports + 1, 1000);
            streak.seconds = Math.min(2 * SPAN_SECONDS, streak.seconds
                    + e.timeS() * (e.intervalSteps() != null && e.intervalSteps() > 1 ? e.intervalSteps() : 1));
            if (streak.reports == 1) {
                seen = Seen.TURNED_ABOVE;
            } else if (news && seen == Seen.NOTHING) {
                seen = Seen.ABOVE;
            }
        }
        return seen;
    }
}
