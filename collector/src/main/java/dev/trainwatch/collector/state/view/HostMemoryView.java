package dev.trainwatch.collector.state.view;

/**
 * A node's memory as its agent last read it (an entry of {@code host_memory} in {@code GET /v1/runs/{id}}, and the
 * {@code trainwatch_host_*} series). Bytes; null when the agent could not read it. Immutable.
 *
 * @param host              the node
 * @param memAvailableBytes {@code MemAvailable}
 * @param memTotalBytes     {@code MemTotal}
 * @param shmUsedBytes      space used in {@code /dev/shm}
 * @param shmTotalBytes     size of {@code /dev/shm}
 * @param ts                when it was read (collector clock)
 */
public record HostMemoryView(String host, Long memAvailableBytes, Long memTotalBytes, Long shmUsedBytes,
                             Long shmTotalBytes, double ts) {
}
