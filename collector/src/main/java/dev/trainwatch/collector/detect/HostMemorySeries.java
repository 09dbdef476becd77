package dev.trainwatch.collector.detect;

/** One node's memory readings, oldest first (see {@code HostMemory} in the protocol). */
public interface HostMemorySeries extends TimeOrdered {

    String host();

    /** {@code MemTotal}, NaN when not read. */
    double memTotalBytes(int i);

    /** {@code MemAvailable}, NaN when not read. */
    double memAvailableBytes(int i);

    /** Size of {@code /dev/shm}, NaN when not read. */
    double shmTotalBytes(int i);

    /** Use of {@code /dev/shm}, NaN when not read. */
    double shmUsedBytes(int i);
}
