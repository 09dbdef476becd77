package dev.trainwatch.collector.state;

import java.util.Locale;

/**
 * A new run, GPU or agent was refused because every slot of its limit holds one that reported recently; nothing
 * was changed. The HTTP edge answers 429 with {@code Retry-After: retryAfterSeconds} and this message.
 */
public final class LimitReachedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Slots.Kind kind;
    private final int limit;
    private final long retryAfterSeconds;

    LimitReachedException(Slots.Kind kind, int limit, long retryAfterSeconds) {
        super(message(kind, limit, retryAfterSeconds));
        this.kind = kind;
        this.limit = limit;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    private static String message(Slots.Kind kind, int limit, long retryAfterSeconds) {
        if (kind == Slots.Kind.SPECS) {
            return String.format(Locale.ROOT, "spec limit %,d reached: every spec held waits for its run to report,"
                    + " so a new one is refused rather than an accepted one forgotten; retry in %d s, delete specs of"
                    + " runs that will not start, or raise --max-specs", limit, retryAfterSeconds);
        }
        return String.format(Locale.ROOT, "%s limit %,d reached: every slot holds a %s that reported in the last %d"
                        + " minutes, so a new one is refused rather than one of them forgotten; retry in %d s,"
                        + " end finished runs, or raise --max-%s", kind.singular, limit, kind.singular,
                (long) (Slots.SILENT_SECONDS / 60), retryAfterSeconds, kind.label());
    }

    public Slots.Kind kind() {
        return kind;
    }

    public int limit() {
        return limit;
    }

    /** Seconds until the longest-silent live entry counts as silent and its slot can be reused (at least 1). */
    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
