package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.RankSeries;
import dev.trainwatch.collector.detect.StepSeries;
import dev.trainwatch.protocol.StepEvent;
import java.util.Arrays;

/**
 * A run's step reports grouped by the rank that logged them, and the choice of the one rank whose reports make
 * the run's step series.
 *
 * <p>Why one rank: when every rank logs each step (Open-Sora's {@code record_time} timer lines, any preset under
 * torchrun's {@code [rankN]:} prefixes), an 8-rank run sends eight reports per training step. Counting them all
 * would make the run look eight times faster to everything that counts reports (the step-time summary's count,
 * the detectors' minimum number of reports, the window's capacity). In synchronous data-parallel training every
 * rank's step ends at the same gradient all-reduce, so any one rank's wall time per step is the run's step time;
 * the run's series takes the <em>lead rank</em>: the lowest rank that is still reporting. That is the rank a
 * rank-0-only log (PixArt, Sana, DiT, a script pushing its own steps) shows, so the same run reads the same
 * whether its log has one rank or all of them; and a multi-node run whose agents each tail their own node's ranks
 * still counts each step once. De-duplicating by step number instead would break where Open-Sora's epoch-local
 * step counts restart, and would pick a different rank's time for each step.
 *
 * <p>The lead passes on when it falls silent: when another rank reports more than {@link #LEAD_SILENCE_SECONDS}
 * after the lead's newest report (the lead's log or its node's agent stopped while training goes on), the lowest
 * rank reporting within that time leads. That is well under the {@code stalled} detector's two minutes, so a
 * lost lead does not look like a hung run; a lower rank that reports again takes the lead back.
 *
 * <p>Each tracked rank keeps its newest {@link #ENTRIES_PER_RANK} reports (within the run's window): enough to
 * compare ranks' step and data-load times, bounded per run by {@link #MAX_RANKS} (beyond it a new rank takes the
 * slot of a rank silent for {@link #SILENT_SECONDS}, or is not tracked; a collector usually serves one node's
 * ranks, and cross-node comparisons are PromQL's job).
 * Not thread-safe: guarded by the fleet's lock.
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

    public RankWindows(double spanSeconds) {
        this(spanSeconds, RankBudget.unlimited());
    }

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
        if (k < 0 || k >= count) {
            throw new IndexOutOfBoundsException(k);
        }
        return ranks[k];
    }

    @Override
    public StepSeries steps(int k) {
        if (k < 0 || k >= count) {
            throw new IndexOutOfBoundsException(k);
        }
        return windows[k];
    }
}
