package dev.trainwatch.collector.state.window;

import java.util.Objects;

/**
 * Where the entries of a ring of primitive columns lie (the columns are the owner's arrays): entry 0 is the oldest,
 * at {@code head}. A compare, not a division, per read. Not thread-safe: guarded by the fleet's lock.
 */
public final class Ring {
    private final int capacity;
    private int head;
    private int size;

    public Ring(int capacity) {
        this.capacity = capacity;
    }

    /** A ring holding {@code size} entries at positions 0 to size - 1 (a copy's). */
    public static Ring filled(int capacity, int size) {
        Ring r = new Ring(capacity);
        r.size = size;
        return r;
    }

    public int size() {
        return size;
    }

    public boolean full() {
        return size == capacity;
    }

    /** The array position of entry {@code i} (0 ≤ i < capacity, unchecked). */
    public int slot(int i) {
        int j = head + i;
        return j < capacity ? j : j - capacity;
    }

    /** The array position of entry {@code i}, which must be held. */
    public int checkedSlot(int i) {
        return slot(Objects.checkIndex(i, size));
    }

    public int newest() {
        return slot(size - 1);
    }

    public int oldest() {
        return head;
    }

    /** The position of a new newest entry; the oldest goes when the ring is full. */
    public int append() {
        if (size == capacity) {
            dropOldest();
        }
        return slot(size++);
    }

    public void dropOldest() {
        head = head + 1 == capacity ? 0 : head + 1;
        size--;
    }

    public void clear() {
        head = 0;
        size = 0;
    }

    /** Copies {@code n} entries from entry {@code from} of ring column {@code src} to {@code dst}[0..n). */
    <T> T copy(T src, T dst, int from, int n) {
        int start = slot(from);
        int first = Math.min(n, capacity - start);
        System.arraycopy(src, start, dst, 0, first);
        System.arraycopy(src, 0, dst, first, n - first);
        return dst;
    }
}
