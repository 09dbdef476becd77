package dev.trainwatch.collector.state.window;

/**
 * The rank windows all runs may hold together: as many as the fleet tracks GPUs (a rank drives at least one GPU), so
 * 1,024 runs cannot each fill the per-run 256 ranks (that would be 262,144 windows, about 440 MB of heap). Ranks
 * take a slot when first seen and give it back when trimmed as gone or when their run is forgotten. Not
 * thread-safe: guarded by the fleet's lock.
 */
public final class RankBudget {
    private final int max;
    private int used;

    public RankBudget(int max) {
        this.max = max;
    }

    public int max() {
        return max;
    }

    public int used() {
        return used;
    }

    void take() {
        used++;
    }

    public boolean full() {
        return used >= max;
    }

    public void release(int ranks) {
        used = Math.max(0, used - ranks);
    }
}
