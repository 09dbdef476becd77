package dev.trainwatch.agent.log;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Numbers out of a log line by key. */
final class LineFields {

    /** Stops where the number cannot continue, so Sana's {@code lr:1.000e-04s:(} yields {@code 1.000e-04}. */
    private static final Pattern NUMBER = Pattern.compile("[-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?");
    private static final Pattern NOT_FINITE = Pattern.compile("(?iu)([-+]?)(?:(nan)|inf(?:inity)?)(?!\\p{javaLetter})");

    private LineFields() {
    }

    /** -1 if absent; never the tail of a longer identifier ({@code "loss:"} not inside {@code "step_loss:"}). */
    static int indexOfKey(String s, String key, int from) {
        int i = s.indexOf(key, from);
        while (i >= 0) {
            if (i == 0 || !isIdentifierChar(s.charAt(i - 1))) {
                return i;
            }
            i = s.indexOf(key, i + 1);
        }
        return -1;
    }

    static int lastIndexOfKey(String s, String key) {
        int i = s.lastIndexOf(key);
        while (i >= 0) {
            if (i == 0 || !isIdentifierChar(s.charAt(i - 1))) {
                return i;
            }
            i = s.lastIndexOf(key, i - 1);
        }
        return -1;
    }

    static boolean isIdentifierChar(char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    static int skipSpaces(String s, int i) {
        while (i < s.length() && s.charAt(i) == ' ') {
            i++;
        }
        return i;
    }

    static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** Null for none, and for {@code nan}/{@code inf}: a time that is not a number is no time. */
    static Double doubleAt(String s, int start) {
        if (start < 0) {
            return null;
        }
        Matcher m = NUMBER.matcher(s).region(skipSpaces(s, start), s.length());
        if (!m.lookingAt()) {
            return null;
        }
        double v = Double.parseDouble(m.group());
        return Double.isFinite(v) ? v : null;
    }

    /** Also Python's {@code nan}/{@code inf}/{@code -inf} (any case): a diverged loss is a reading, not an absence. */
    static Double readingAt(String s, int start) {
        Double v = doubleAt(s, start);
        if (v != null || start < 0) {
            return v;
        }
        Matcher m = NOT_FINITE.matcher(s).region(skipSpaces(s, start), s.length());
        if (!m.lookingAt()) {
            return null;
        }
        return m.group(2) != null ? Double.NaN : m.group(1).equals("-") ? Double.NEGATIVE_INFINITY
                : Double.POSITIVE_INFINITY;
    }

    static Double readingAfter(String s, String key, int from) {
        int k = indexOfKey(s, key, from);
        return k < 0 ? null : readingAt(s, k + key.length());
    }

    static Double doubleAfter(String s, String key, int from) {
        int k = indexOfKey(s, key, from);
        return k < 0 ? null : doubleAt(s, k + key.length());
    }

    /** The first 18 digits; -1 for none. */
    static long longAt(String s, int start) {
        if (start < 0) {
            return -1;
        }
        int i = skipSpaces(s, start);
        int end = Math.min(digitsEnd(s, i), i + 18);
        return end == i ? -1 : Long.parseLong(s, i, end, 10);
    }

    static int digitsEnd(String s, int start) {
        int i = start;
        while (i < s.length() && isDigit(s.charAt(i))) {
            i++;
        }
        return i;
    }

    static int[] pairAt(String s, int i) {
        if (i < 0 || i >= s.length() || s.charAt(i) != '(') {
            return null;
        }
        long h = longAt(s, i + 1);
        if (h < 0) {
            return null;
        }
        int comma = s.indexOf(',', i + 1);
        if (comma < 0 || comma > i + 24) {
            return null;
        }
        long w = longAt(s, comma + 1);
        if (w < 0 || h > Integer.MAX_VALUE || w > Integer.MAX_VALUE) {
            return null;
        }
        return new int[] {(int) h, (int) w};
    }
}
