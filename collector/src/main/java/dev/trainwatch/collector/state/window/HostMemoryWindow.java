package dev.trainwatch.collector.state.window;

import dev.trainwatch.collector.detect.HostMemorySeries;
import dev.trainwatch.protocol.HostMemory;

/** A node's newest memory readings (a ring of {@value #CAPACITY}, about 10 minutes at the agent's 5 s). */
public final class HostMemoryWindow implements HostMemorySeries {

    public static final int CAPACITY = 120;

    private final String host;
    private final double[] ts = new double[CAPACITY];
    private final double[] total = new double[CAPACITY];
    private final double[] available = new double[CAPACITY];
    private final double[] shmTotal = new double[CAPACITY];
    private final double[] shmUsed = new double[CAPACITY];
    private final Ring ring = new Ring(CAPACITY);

    public HostMemoryWindow(String host) {
        this.host = host;
    }

    public void add(HostMemory m, double at) {
        if (ring.size() > 0 && at <= ts[ring.newest()]) {
            return; // replayed or reordered
        }
        int i = ring.append();
        ts[i] = at;
        total[i] = d(m.memTotalBytes());
        available[i] = d(m.memAvailableBytes());
        shmTotal[i] = d(m.shmTotalBytes());
        shmUsed[i] = d(m.shmUsedBytes());
    }

    /** The time of the newest reading, 0 before the first. */
    public double lastSeen() {
        return ring.size() == 0 ? 0 : ts[ring.newest()];
    }

    private static double d(Long v) {
        return v == null || v < 0 ? Double.NaN : v;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int size() {
        return ring.size();
    }

    @Override
    public double ts(int i) {
        return ts[ring.checkedSlot(i)];
    }

    @Override
    public double memTotalBytes(int i) {
        return total[ring.checkedSlot(i)];
    }

    @Override
    public double memAvailableBytes(int i) {
        return available[ring.checkedSlot(i)];
    }

    @Override
    public double shmTotalBytes(int i) {
        return shmTotal[ring.checkedSlot(i)];
    }

    @Override
    public double shmUsedBytes(int i) {
        return shmUsed[ring.checkedSlot(i)];
    }
}
