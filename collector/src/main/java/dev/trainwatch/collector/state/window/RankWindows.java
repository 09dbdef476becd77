package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.RankSeries;
import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.protocol.StepEvent;
import java.util.Arrays;
import java.util.Objects;

/**
 * A run's step reports grouped by the rank that logged them, and the choice of the <em>lead rank</em> whose reports
 * make the run's step series: when every rank logs each step (Open-Sora's timer lines, torchrun's {@code [rankN]:}
 * prefixes), counting them all would make the run look N times faster; in synchronous data-parallel training any
 * rank's time per step is the run's. The lead is the lowest rank still reporting, the one a rank-0-only log shows;
 * it passes on when it falls silent for {@link #LEAD_SILENCE_SECONDS} while others report (well under the stalled
 * detector's two minutes). Each rank keeps its newest {@link #ENTRIES_PER_RANK} reports, at most {@link #MAX_RANKS}
 * ranks per run. Guarded by the fleet's lock.
 */
public final class RankWindows implements RankSeries {

    /** Reports kept per rank. */
    public static final int ENTRIES_PER_RANK = 16;
    /** Ranks tracked per run. */
    public static final int MAX_RANKS = 256;
    /** A lead rank silent this long while another rank reports hands the lead on. */
    public static final double LEAD_SILENCE_SECONDS = 60;
    /** An entry of the fleet not heard from this long is silent and may give its slot up (also the fleet's runs'). */
    public static final double SILENT_SECONDS = 600;

    private final double spanSeconds;
    private int[] ranks = new int[4];
    private StepWindow[] windows = new StepWindow[4];
    private double[] newestTs = new double[4];
    private int count;
    private int lead = -1;
    /** Reports of ranks refused because every slot held a live rank (read by the fleet for its limit metrics). */
    private long refused;

    private final RankBudget budget;

    /** Ranks of one run, taking their slots from {@code budget}, shared by all runs of the fleet. */
    public RankWindows(double spanSeconds, RankBudget budget) {
        this.spanSeconds = spanSeconds;
        this.budget = budget;
    }

    /**
     * Records a report of rank {@code e.rank()} (not null, at least 0) stamped {@code ts}.
     *
     * @return whether the report belongs to the run's step series (it comes from the lead rank)
     */
    public boolean add(StepEvent e, double ts) {
        int rank = e.rank();
        int k = indexOf(rank);
        if (k < 0) {
            k = insert(rank, ts);
        }
        if (k >= 0) {
            windows[k].add(e, ts);
            newestTs[k] = Math.max(newestTs[k], ts);
        }
        int leadAt = lead < 0 ? -1 : indexOf(lead);
        if (leadAt < 0 || rank < lead) {
            lead = leadAt < 0 ? lowestReportingSince(ts - LEAD_SILENCE_SECONDS, rank) : rank;
        } else if (rank != lead && newestTs[leadAt] < ts - LEAD_SILENCE_SECONDS) {
            lead = lowestReportingSince(ts - LEAD_SILENCE_SECONDS, rank);
        }
        return rank == lead;
    }

    /** New ranks refused for want of room, since the run began. */
    public long refused() {
        return refused;
    }

    /** The rank whose reports make the run's step series, -1 before any. */
    public int lead() {
        return lead;
    }

    /** Drops reports older than the window and ranks with none left in it. */
    public void trim(double now) {
        double oldest = now - spanSeconds;
        int kept = 0;
        for (int k = 0; k < count; k++) {
            if (newestTs[k] < oldest) {
                continue; // a rank gone for the whole window (it left, or the run restarted with fewer ranks)
            }
            windows[k].trim(now);
            ranks[kept] = ranks[k];
            windows[kept] = windows[k];
            newestTs[kept] = newestTs[k];
            kept++;
        }
        for (int k = kept; k < count; k++) {
            windows[k] = null;
        }
        budget.release(count - kept);
        count = kept;
    }

    private int lowestReportingSince(double since, int fallback) {
        for (int k = 0; k < count; k++) {
            if (newestTs[k] >= since) {
                return ranks[k];
            }
        }
        return fallback;
    }

    private int indexOf(int rank) {
        return Arrays.binarySearch(ranks, 0, count, rank);
    }

    /**
     * Adds a window for {@code rank}. When every slot holds a rank, the one silent longest gives its slot if it has
     * been silent for {@link #SILENT_SECONDS}; otherwise the new rank is refused (-1, counted in
     * {@link #refused}): a live rank is never dropped for a new one.
     */
    private int insert(int rank, double ts) {
        if (count == MAX_RANKS || budget.full()) {
            if (count == 0) {
                refused++; // every slot of the fleet-wide budget is held by other runs' ranks
                return -1;
            }
            int silent = 0;
            for (int k = 1; k < count; k++) {
                if (newestTs[k] < newestTs[silent]) {
                    silent = k;
                }
            }
            if (ts - newestTs[silent] < SILENT_SECONDS) {
                refused++;
                return -1;
            }
            System.arraycopy(ranks, silent + 1, ranks, silent, count - silent - 1);
            System.arraycopy(windows, silent + 1, windows, silent, count - silent - 1);
            System.arraycopy(newestTs, silent + 1, newestTs, silent, count - silent - 1);
            count--;
            windows[count] = null;
            budget.release(1);
        }
        int at = -(Arrays.binarySearch(ranks, 0, count, rank) + 1);
        if (count == ranks.length) {
            int grown = Math.min(MAX_RANKS, ranks.length * 2);
            ranks = Arrays.copyOf(ranks, grown);
            windows = Arrays.copyOf(windows, grown);
            newestTs = Arrays.copyOf(newestTs, grown);
        }
        System.arraycopy(ranks, at, ranks, at + 1, count - at);
        System.arraycopy(windows, at, windows, at + 1, count - at);
        System.arraycopy(newestTs, at, newestTs, at + 1, count - at);
        ranks[at] = rank;
        windows[at] = new StepWindow(spanSeconds, ENTRIES_PER_RANK);
        newestTs[at] = Double.NEGATIVE_INFINITY;
        count++;
        budget.take();
        return at;
    }

    @Override
    public int count() {
        return count;
    }

    @Override
    public int rank(int k) {
        return ranks[Objects.checkIndex(k, count)];
    }

    @Override
    public StepSeries steps(int k) {
        return windows[Objects.checkIndex(k, count)];
    }
}
