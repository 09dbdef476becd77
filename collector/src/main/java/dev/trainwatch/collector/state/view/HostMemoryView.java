package dev.trainwatch.collector.state.view;

/** A node's memory as its agent last read it ({@code host_memory}); bytes, null when unreadable. */
public record HostMemoryView(String host, Long memAvailableBytes, Long memTotalBytes, Long shmUsedBytes,
                             Long shmTotalBytes, double ts) {
}
