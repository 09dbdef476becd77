package dev.trainwatch.collector.detect;

/**
 * One rank's process as its node's agent last read it, with its CPU use over the recent readings.
 *
 * @param gpuUuid         its GPU, when known
 * @param state           the kernel's state letter ({@code R}, {@code S}, {@code D}, {@code Z}, {@code T}), or null
 * @param cpuRate         CPU seconds per wall second over the last ~30 s of readings (1 = one core busy); NaN
 *                        before two readings apart
 * @param rssBytes        resident memory, or NaN
 * @param workers         its child processes (DataLoader workers), -1 when unknown
 * @param workersRssBytes resident memory of those children together, or NaN
 * @param ts              when it was read (collector clock)
 */
public record RankProcess(int rank, String host, long pid, String gpuUuid, String state, double cpuRate,
                          double rssBytes, int workers, double workersRssBytes, double ts) {
}
