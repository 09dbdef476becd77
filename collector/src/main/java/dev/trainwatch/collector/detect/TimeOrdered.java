package dev.trainwatch.collector.detect;

/** Entries ordered by time, oldest first: what the windows of GPU samples and step reports share. */
public interface TimeOrdered {

    int size();

    /** Unix seconds of entry {@code i}; non-decreasing in {@code i}. */
    double ts(int i);

    /** Index of the first entry with {@code ts >= fromTs} ({@code size()} when none), by binary search. */
    default int firstIndexAtOrAfter(double fromTs) {
        int lo = 0;
        int hi = size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ts(mid) < fromTs) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
