package dev.trainwatch.collector.state;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * Which batch {@code seq}s of one agent were applied: a bit each for the {@value #WIDTH} numbers below the newest,
 * so exactly the batches applied are duplicates. A number {@value #MAX_JUMP} or more away opens a window of its own
 * (at most {@value #MAX_WINDOWS}, least recently used dropped), so a forged huge {@code seq} silences nobody. Used
 * under the {@link Fleet}'s lock.
 */
final class AppliedSeqs {

    /** Numbers remembered below a window's newest. */
    static final int WIDTH = 1024;
    /** How far above a window's newest number a batch still moves that window forward. */
    static final long MAX_JUMP = 1L << 20;
    /** Windows per agent (its own, and room for numbers someone else sent under its id). */
    static final int MAX_WINDOWS = 4;

    private final List<Window> windows = new ArrayList<>(1);

    /** One window: the newest number and a bit for each of the {@link #WIDTH} numbers up to it. */
    private static final class Window {
        long top;
        final long[] bits = new long[WIDTH / 64];

        Window(long top) {
            this.top = top;
        }

        boolean covers(long seq) {
            return seq <= top && top - seq < WIDTH;
        }

        boolean has(long seq) {
            int i = (int) (top - seq);
            return (bits[i >>> 6] & (1L << (i & 63))) != 0;
        }

        void set(long seq) {
            int i = (int) (top - seq);
            bits[i >>> 6] |= 1L << (i & 63);
        }

        /** Moves the window up to {@code newTop}: every bit's distance from the top grows by the difference. */
        void slide(long newTop) {
            long shift = newTop - top;
            top = newTop;
            if (shift >= WIDTH) {
                Arrays.fill(bits, 0);
                return;
            }
            int words = (int) (shift >>> 6);
            int bitsShift = (int) (shift & 63);
            for (int w = bits.length - 1; w >= 0; w--) {
                int from = w - words;
                long value = from >= 0 ? bits[from] << bitsShift : 0;
                if (bitsShift != 0 && from - 1 >= 0) {
                    value |= bits[from - 1] >>> (64 - bitsShift);
                }
                bits[w] = value;
            }
        }
    }

    /** Whether {@code seq} was applied (and is still remembered). */
    boolean applied(long seq) {
        for (Window w : windows) {
            if (w.covers(seq)) {
                return w.has(seq);
            }
        }
        return false;
    }

    /** Records {@code seq} as applied. */
    void add(long seq) {
        for (int i = 0; i < windows.size(); i++) {
            if (windows.get(i).covers(seq)) {
                windows.get(i).set(seq);
                touch(i);
                return;
            }
        }
        for (int i = 0; i < windows.size(); i++) {
            Window w = windows.get(i);
            if (seq > w.top && seq - w.top < MAX_JUMP) {
                w.slide(seq);
                w.set(seq);
                touch(i);
                return;
            }
        }
        for (Window w : windows) {
            if (seq < w.top && w.top - seq < MAX_JUMP) {
                return; // below this window's reach: not remembered (see the class comment)
            }
        }
        Window fresh = new Window(seq);
        fresh.set(seq);
        addFirst(fresh);
    }

    private void addFirst(Window w) {
        windows.add(0, w);
        if (windows.size() > MAX_WINDOWS) {
            windows.remove(windows.size() - 1);
        }
    }

    /** The most recently used window first. */
    private void touch(int i) {
        if (i > 0) {
            windows.add(0, windows.remove(i));
        }
    }

    /** The windows as text for the ledger's file: {@code top:hex} each, the least recently used first. */
    List<String> encode() {
        List<String> out = new ArrayList<>(windows.size());
        HexFormat hex = HexFormat.of();
        for (int i = windows.size() - 1; i >= 0; i--) {
            Window w = windows.get(i);
            StringBuilder text = new StringBuilder(20 + WIDTH / 4).append(w.top).append(':');
            for (long word : w.bits) {
                text.append(hex.toHexDigits(word));
            }
            out.add(text.toString());
        }
        return out;
    }

    /** Adds a window written by {@link #encode()}; throws {@link IllegalArgumentException} for a torn line. */
    void decode(String text) {
        int colon = text.indexOf(':');
        if (colon < 0 || text.length() - colon - 1 != WIDTH / 4) {
            throw new IllegalArgumentException("not a window: " + text);
        }
        Window w = new Window(Long.parseLong(text.substring(0, colon)));
        for (int i = 0; i < w.bits.length; i++) {
            int at = colon + 1 + i * 16;
            w.bits[i] = HexFormat.fromHexDigitsToLong(text, at, at + 16);
        }
        windows.removeIf(other -> other.top == w.top);
        addFirst(w);
    }
}
