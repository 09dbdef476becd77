package dev.trainwatch.protocol;

import java.util.List;

/**
 * The largest multi-scale bucket a run's step reports have shown (PixArt's and Sana's {@code s:(h, w)}, the latent
 * size). A report of a larger one is news: the collector's {@code oom_risk} estimates the peak memory of the largest
 * bucket seen, and a bucket that does not fit is an OOM on its way. An agent that holds its polls for a batch
 * ({@code --ship-every}) sends such a report at once. The first bucket a watch sees is news too (an agent attached to
 * a running job has seen none). Not thread-safe: one agent's poll thread.
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
