package dev.trainwatch.collector.state;

import dev.trainwatch.collector.state.window.RankWindows;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.ToDoubleFunction;

/**
 * Which tracked entry may give its slot to a new one when a limit is full, and what was refused and forgotten. Only
 * an entry not reporting may go (an ended run, one silent for {@link #SILENT_SECONDS}, a spec-only run past its
 * retention); when every slot is live the new entry is refused ({@link LimitReachedException}, 429), never a live one
 * evicted. Selection is pure; counters are atomic (read by metrics without the fleet's lock).
 */
public final class Slots {
    /** An entry not heard from for this long counts as silent and may be forgotten to make room. */
    public static final double SILENT_SECONDS = RankWindows.SILENT_SECONDS;

    /** The limited things, named as the {@code reason} label of the limit metrics. */
    public enum Kind {
        RUNS("run"),
        GPUS("GPU"),
        AGENTS("agent"),
        RANKS("rank"),
        SPECS("spec");

        final String singular;

        Kind(String singular) {
            this.singular = singular;
        }

        /** The metric label value: {@code runs}, {@code gpus}, {@code agents}, {@code ranks}. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** One limit as the metrics and the page show it. */
    public record Usage(Kind kind, int used, int limit, long refused, long forgotten, double lastRefusedTs) {
    }

    /** By {@link Kind#ordinal()}. */
    private final AtomicLongArray refused = new AtomicLongArray(Kind.values().length);
    private final AtomicLongArray forgotten = new AtomicLongArray(Kind.values().length);
    private final Map<Kind, Double> lastRefused = new ConcurrentHashMap<>();

    /**
     * A new run's room, from one pass: the run whose slot may be reused (ended longest ago, else silent longest, else
     * the oldest expired spec-only run; null when every run is live) and the earliest {@code lastSeen}, for the retry.
     */
    record Room(RunState victim, double oldestSeen) {
        /** {@link #retryAfterSeconds} over the same runs. */
        long retryAfterSeconds(double now) {
            return Slots.retryAfter(oldestSeen, now);
        }
    }

    /** A spec-only run keeps its slot {@code specRetentionSeconds}: it was answered 200. */
    static Room roomForRun(Collection<RunState> runs, double now, double specRetentionSeconds) {
        RunState ended = null;
        RunState silent = null;
        RunState specOnly = null;
        double oldestSeen = Double.POSITIVE_INFINITY;
        for (RunState r : runs) {
            boolean waitingSpec = !r.ended() && !observed(r);
            oldestSeen = Math.min(oldestSeen, waitingSpec ? r.lastSeen() + specRetentionSeconds - SILENT_SECONDS
                    : r.lastSeen());
            if (r.ended()) {
                if (ended == null || r.endedAt() < ended.endedAt()) {
                    ended = r;
                }
            } else if (waitingSpec) {
                if (now - r.lastSeen() >= specRetentionSeconds && (specOnly == null || r.lastSeen() < specOnly.lastSeen())) {
                    specOnly = r;
                }
            } else if (now - r.lastSeen() >= SILENT_SECONDS) {
                if (silent == null || r.lastSeen() < silent.lastSeen()) {
                    silent = r;
                }
            }
        }
        return new Room(ended != null ? ended : silent != null ? silent : specOnly, oldestSeen);
    }

    /** The keys of at most {@code wanted} entries silent at least {@link #SILENT_SECONDS}, longest silent first. */
    static <V> List<String> silentToForget(Map<String, V> entries, ToDoubleFunction<V> lastSeen, double now,
                                           int wanted) {
        return entries.entrySet().stream().filter(e -> now - lastSeen.applyAsDouble(e.getValue()) >= SILENT_SECONDS)
                .sorted(Comparator.comparingDouble(e -> lastSeen.applyAsDouble(e.getValue()))).limit(wanted)
                .map(Map.Entry::getKey).toList();
    }

    /** Whether anything of the run was ever observed: a step, or GPUs an agent attributed to it. */
    static boolean observed(RunState r) {
        return r.lastStep() >= 0 || r.steps().size() > 0 || !r.hosts().isEmpty();
    }

    /** Seconds until the least recently seen of these becomes silent (at least 1, at most the silence span). */
    static <V> long retryAfterSeconds(Collection<V> entries, ToDoubleFunction<V> lastSeen, double now) {
        return retryAfter(entries.stream().mapToDouble(lastSeen).min().orElse(Double.POSITIVE_INFINITY), now);
    }

    private static long retryAfter(double oldest, double now) {
        double wait = Double.isFinite(oldest) ? oldest + SILENT_SECONDS - now : SILENT_SECONDS;
        return (long) Math.max(1, Math.min(SILENT_SECONDS, Math.ceil(wait)));
    }

    LimitReachedException refuse(Kind kind, int limit, long retryAfterSeconds, double now) {
        refused.incrementAndGet(kind.ordinal());
        lastRefused.put(kind, now);
        return new LimitReachedException(kind, limit, retryAfterSeconds);
    }

    void forgot(Kind kind) {
        forgotten.incrementAndGet(kind.ordinal());
    }

    double lastRefused(Kind kind) {
        return lastRefused.getOrDefault(kind, Double.NaN);
    }

    Usage usage(Kind kind, int used, int limit) {
        return new Usage(kind, used, limit, refused.get(kind.ordinal()), forgotten.get(kind.ordinal()),
                lastRefused(kind));
    }
}
