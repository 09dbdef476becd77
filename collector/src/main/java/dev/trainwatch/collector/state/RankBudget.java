package dev.trainwatch.collector.state;

/**
 * The rank windows all runs may hold together: as many as the fleet tracks GPUs (a rank drives at least one GPU), so
 * 1,024 runs cannot each fill the per-run 256 ranks (that would be 262,144 windows, about 440 MB of heap). Ranks
 * take a slot when first seen and give it back when trimmed as gone or when their run is forgotten. Not
 * thread-safe: guarded by the fleet's lock.
 */
final class RankBudget {
    final int max;
    int used;

    RankBudget(int max) {
        this.max = max;
    }

    static RankBudget unlimited() {
        return new RankBudget(Integer.MAX_VALUE);
    }

    boolean full() {
        return used >= max;
    }

    void release(int ranks) {
        used = Math.max(0, used - ranks);
    }
}
