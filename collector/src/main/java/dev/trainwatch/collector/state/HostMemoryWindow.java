package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.HostMemorySeries;
import dev.trainwatch.protocol.HostMemory;

/** A node's newest memory readings (a ring of {@value #CAPACITY}, about 10 minutes at the agent's 5 s). */
final class HostMemoryWindow implements HostMemorySeries {

    static final int CAPACITY = 120;

    private final String host;
    private final double[] ts = new double[CAPACITY];
    private final double[] total = new double[CAPACITY];
    private final double[] available = new double[CAPACITY];
    private final double[] shmTotal = new double[CAPACITY];
    private final double[] shmUsed = new double[CAPACITY];
    private int head;
    private int size;
    double lastSeen;

    HostMemoryWindow(String host) {
        this.host = host;
    }

    void add(HostMemory m, double at) {
        if (size > 0 && at <= ts[slot(size - 1)]) {
            return; // replayed or reordered
        }
        int i = (head + size) % CAPACITY;
        if (size == CAPACITY) {
            head = (head + 1) % CAPACITY;
        } else {
            size++;
        }
        ts[i] = at;
        total[i] = d(m.memTotalBytes());
        available[i] = d(m.memAvailableBytes());
        shmTotal[i] = d(m.shmTotalBytes());
        shmUsed[i] = d(m.shmUsedBytes());
        lastSeen = at;
    }

    private static double d(Long v) {
        return v == null || v < 0 ? Double.NaN : v;
    }

    private int slot(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i);
        }
        return (head + i) % CAPACITY;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public double ts(int i) {
        return ts[slot(i)];
    }

    @Override
    public double memTotalBytes(int i) {
        return total[slot(i)];
    }

    @Override
    public double memAvailableBytes(int i) {
        return available[slot(i)];
    }

    @Override
    public double shmTotalBytes(int i) {
        return shmTotal[slot(i)];
    }

    @Override
    public double shmUsedBytes(int i) {
        return shmUsed[slot(i)];
    }
}
