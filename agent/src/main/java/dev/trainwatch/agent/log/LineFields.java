package dev.trainwatch.agent.log;

/** Numbers out of a log line by key, without regular expressions (several times cheaper on a catch-up read). */
final class LineFields {

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

    /** Stops where the number cannot continue, so Sana's {@code lr:1.000e-04s:(} yields {@code 1.000e-04}. */
    static int numberEnd(String s, int start) {
        int n = s.length();
        int i = start;
        if (i < n && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
            i++;
        }
        int digitsStart = i;
        while (i < n && isDigit(s.charAt(i))) {
            i++;
        }
        if (i < n && s.charAt(i) == '.') {
            int afterDot = i + 1;
            int j = afterDot;
            while (j < n && isDigit(s.charAt(j))) {
                j++;
            }
            if (j > afterDot || i > digitsStart) {
                i = j;
            }
        }
        if (i == digitsStart) {
            return start;
        }
        if (i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            int j = i + 1;
            if (j < n && (s.charAt(j) == '-' || s.charAt(j) == '+')) {
                j++;
            }
            int expStart = j;
            while (j < n && isDigit(s.charAt(j))) {
                j++;
            }
            if (j > expStart) {
                i = j;
            }
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
        int i = skipSpaces(s, start);
        int end = numberEnd(s, i);
        if (end == i) {
            return null;
        }
        try {
            double v = Double.parseDouble(s.substring(i, end));
            return Double.isFinite(v) ? v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Also Python's {@code nan}/{@code inf}/{@code -inf} (any case): a diverged loss is a reading, not an absence. */
    static Double readingAt(String s, int start) {
        Double v = doubleAt(s, start);
        if (v != null || start < 0) {
            return v;
        }
        int i = skipSpaces(s, start);
        boolean negative = false;
        if (i < s.length() && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        if (s.regionMatches(true, i, "nan", 0, 3) && !letterAt(s, i + 3)) {
            return Double.NaN;
        }
        if (s.regionMatches(true, i, "infinity", 0, 8) && !letterAt(s, i + 8)
                || s.regionMatches(true, i, "inf", 0, 3) && !letterAt(s, i + 3)) {
            return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        return null;
    }

    private static boolean letterAt(String s, int i) {
        return i < s.length() && Character.isLetter(s.charAt(i));
    }

    static Double readingAfter(String s, String key, int from) {
        int k = indexOfKey(s, key, from);
        return k < 0 ? null : readingAt(s, k + key.length());
    }

    static Double doubleAfter(String s, String key, int from) {
        int k = indexOfKey(s, key, from);
        return k < 0 ? null : doubleAt(s, k + key.length());
    }

    static long longAt(String s, int start) {
        if (start < 0) {
            return -1;
        }
        int i = skipSpaces(s, start);
        long v = 0;
        int digits = 0;
        while (i < s.length() && isDigit(s.charAt(i)) && digits < 18) {
            v = v * 10 + (s.charAt(i) - '0');
            i++;
            digits++;
        }
        return digits == 0 ? -1 : v;
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
