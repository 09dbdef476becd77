package dev.trainwatch.protocol;

/**
 * The driver's buffered GPU-utilisation samples between two polls, summarised. A 200 ms stall between 1 s polls
 * shows as {@code min} near 0 and a non-zero {@code idleFraction}, even when the point reading is 100%.
 *
 * @param minRatio     smallest sample, 0–1
 * @param meanRatio    mean sample, 0–1
 * @param maxRatio     largest sample, 0–1
 * @param idleFraction share of samples at or below the idle threshold (5%)
 * @param fromTs       unix seconds of the oldest sample
 * @param toTs         unix seconds of the newest sample
 */
public record UtilizationWindow(int count, double minRatio, double meanRatio, double maxRatio, double idleFraction,
                                double fromTs, double toTs) {
}
