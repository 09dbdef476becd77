package dev.trainwatch.agent.log;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Byte searches eight bytes per step (SWAR: after an XOR a match is a zero byte, {@code (v - 0x01…) & ~v & 0x80…} flags
 * it); only the lowest flagged byte is exact, all a first-match search needs. These loops decide catch-up throughput.
 */
final class ByteScan {

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    private ByteScan() {
    }

    static long broadcast(byte b) {
        return (b & 0xffL) * ONES;
    }

    private static long zeroFlags(long v) {
        return (v - ONES) & ~v & HIGHS;
    }

    static int indexOfEither(byte[] bytes, int from, int to, byte a, byte b) {
        long pa = broadcast(a);
        long pb = broadcast(b);
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long word = (long) LONGS.get(bytes, i);
            long flags = zeroFlags(word ^ pa) | zeroFlags(word ^ pb);
            if (flags != 0) {
                return i + (Long.numberOfTrailingZeros(flags) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (bytes[i] == a || bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    static int indexOf(byte[] bytes, int from, int to, byte a) {
        long pa = broadcast(a);
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long flags = zeroFlags((long) LONGS.get(bytes, i) ^ pa);
            if (flags != 0) {
                return i + (Long.numberOfTrailingZeros(flags) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (bytes[i] == a) {
                return i;
            }
        }
        return -1;
    }

    record Needle(byte[] bytes, int anchor) {
        static Needle of(byte[] bytes) {
            int best = 0;
            for (int i = 1; i < bytes.length; i++) {
                if (commonness(bytes[i]) < commonness(bytes[best])) {
                    best = i;
                }
            }
            return new Needle(bytes, best);
        }

        private static int commonness(byte b) {
            if ((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == ' ') {
                return 3;
            }
            if (b == ':' || b == ',' || b == '.' || b == '-' || b == '/' || b == '[' || b == ']') {
                return 2;
            }
            if (b >= 'A' && b <= 'Z') {
                return 1;
            }
            return 0;
        }
    }

    static Needle[] needles(String... parts) {
        return Arrays.stream(parts).map(p -> Needle.of(p.getBytes(StandardCharsets.UTF_8))).toArray(Needle[]::new);
    }

    static boolean containsAny(byte[] bytes, int offset, int length, Needle[] needles) {
        for (Needle needle : needles) {
            if (contains(bytes, offset, length, needle)) {
                return true;
            }
        }
        return false;
    }

    static boolean contains(byte[] bytes, int offset, int length, Needle needle) {
        byte[] f = needle.bytes();
        int anchor = needle.anchor();
        int end = offset + length;
        int from = offset + anchor;
        int to = end - (f.length - anchor) + 1;
        byte a = f[anchor];
        while (from < to) {
            int hit = indexOf(bytes, from, to, a);
            if (hit < 0) {
                return false;
            }
            int start = hit - anchor;
            int j = 0;
            while (j < f.length && bytes[start + j] == f[j]) {
                j++;
            }
            if (j == f.length) {
                return true;
            }
            from = hit + 1;
        }
        return false;
    }
}
