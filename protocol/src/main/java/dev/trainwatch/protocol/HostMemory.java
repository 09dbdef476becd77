package dev.trainwatch.protocol;

/**
 * The node's memory as the kernel reports it: what the OOM killer and DataLoader workers run out of. Bytes; a
 * reading the agent could not take is null. Immutable.
 *
 * @param ts                unix seconds of the reading
 * @param memTotalBytes     {@code MemTotal} of {@code /proc/meminfo}
 * @param memAvailableBytes {@code MemAvailable}: what can be allocated without swapping
 * @param swapUsedBytes     {@code SwapTotal - SwapFree}
 * @param shmTotalBytes     size of {@code /dev/shm} (DataLoader workers pass batches through it)
 * @param shmUsedBytes      space used in {@code /dev/shm}
 */
public record HostMemory(double ts, Long memTotalBytes, Long memAvailableBytes, Long swapUsedBytes, Long shmTotalBytes,
                         Long shmUsedBytes) {
}
