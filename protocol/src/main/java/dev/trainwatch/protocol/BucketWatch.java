package dev.trainwatch.protocol;

import java.util.List;

/**
 * The largest multi-scale bucket a run's step reports have shown: a larger one (or the first) is news for
 * {@code oom_risk}, sent at once by an agent holding polls. Not thread-safe: one poll thread.
 */
public final class BucketWatch {

    private long largestArea;

    /** Reads a poll's new reports; true when one of them shows a bucket larger (in area) than any before. */
    public boolean read(List<StepEvent> steps) {
        boolean larger = false;
        for (StepEvent e : steps) {
            if (e == null || e.bucketHeight() == null || e.bucketWidth() == null || e.bucketHeight() <= 0
                    || e.bucketWidth() <= 0) {
                continue;
            }
            long area = (long) e.bucketHeight() * e.bucketWidth();
            if (area > largestArea) {
                largestArea = area;
                larger = true;
            }
        }
        return larger;
    }
}
