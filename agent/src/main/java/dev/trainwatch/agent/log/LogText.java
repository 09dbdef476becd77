package dev.trainwatch.agent.log;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** ANSI colour codes, a logger's timestamp prefix and a launcher's rank prefix. */
final class LogText {

    private static final int TIMESTAMP_SEARCH = 48;

    private LogText() {
    }

    /** Strips CSI, OSC and short {@code ESC [intermediates] final} escapes (loggers' colours, tqdm's cursor). */
    static String stripAnsi(String s) {
        int esc = s.indexOf('\u001b');
        if (esc < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length());
        out.append(s, 0, esc);
        int i = esc;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c != '\u001b') {
                int next = s.indexOf('\u001b', i);
                int runEnd = next < 0 ? n : next;
                out.append(s, i, runEnd);
                i = runEnd;
                continue;
            }
            if (i + 1 >= n) {
                break;
            }
            char kind = s.charAt(i + 1);
            if (kind == '[') {
                int j = i + 2;
                while (j < n && (s.charAt(j) < 0x40 || s.charAt(j) > 0x7e)) {
                    j++;
                }
                i = j + 1;
            } else if (kind == ']') {
                int j = i + 2;
                while (j < n && s.charAt(j) != '\u0007' && !(s.charAt(j) == '\u001b' && j + 1 < n
                        && s.charAt(j + 1) == '\\')) {
                    j++;
                }
                i = j < n && s.charAt(j) == '\u001b' ? j + 2 : j + 1;
            } else {
                int j = i + 1;
                while (j < n && s.charAt(j) >= 0x20 && s.charAt(j) <= 0x2f) {
                    j++;
                }
                i = j + 1;
            }
        }
        return out.toString();
    }

    /**
     * Python logging's {@code 2024-05-01 12:00:00,123}, DiT's and Open-Sora's {@code [%(asctime)s]}, ISO-8601 with an
     * optional offset, accelerate's {@code 05/01/2024 12:00:00}; without an offset in {@code zone} (asctime is local).
     */
    static Double timestamp(String s, ZoneId zone) {
        int limit = Math.min(s.length() - 19, TIMESTAMP_SEARCH);
        for (int i = 0; i <= limit; i++) {
            if (LineFields.isDigit(s.charAt(i))) {
                if (looksLikeDateTime(s, i)) {
                    return parseAt(s, i, zone);
                }
                if (looksLikeUsDateTime(s, i)) {
                    return parseUsAt(s, i, zone);
                }
            }
        }
        return null;
    }

    private static boolean looksLikeDateTime(String s, int i) {
        return s.charAt(i + 4) == '-' && s.charAt(i + 7) == '-' && (s.charAt(i + 10) == ' ' || s.charAt(i + 10) == 'T')
                && s.charAt(i + 13) == ':' && s.charAt(i + 16) == ':'
                && digits(s, i, 4) && digits(s, i + 5, 2) && digits(s, i + 8, 2) && digits(s, i + 11, 2)
                && digits(s, i + 14, 2) && digits(s, i + 17, 2);
    }

    private static boolean looksLikeUsDateTime(String s, int i) {
        return s.charAt(i + 2) == '/' && s.charAt(i + 5) == '/' && s.charAt(i + 10) == ' ' && s.charAt(i + 13) == ':'
                && s.charAt(i + 16) == ':' && digits(s, i, 2) && digits(s, i + 3, 2) && digits(s, i + 6, 4)
                && digits(s, i + 11, 2) && digits(s, i + 14, 2) && digits(s, i + 17, 2);
    }

    private static Double parseUsAt(String s, int i, ZoneId zone) {
        try {
            return (double) LocalDateTime.of(num(s, i + 6, 4), num(s, i, 2), num(s, i + 3, 2), num(s, i + 11, 2),
                    num(s, i + 14, 2), num(s, i + 17, 2)).atZone(zone).toEpochSecond();
        } catch (DateTimeException e) {
            return null;
        }
    }

    private static boolean digits(String s, int from, int count) {
        for (int k = from; k < from + count; k++) {
            if (!LineFields.isDigit(s.charAt(k))) {
                return false;
            }
        }
        return true;
    }

    private static int num(String s, int from, int count) {
        int v = 0;
        for (int k = from; k < from + count; k++) {
            v = v * 10 + (s.charAt(k) - '0');
        }
        return v;
    }

    private static Double parseAt(String s, int i, ZoneId zone) {
        try {
            LocalDateTime local = LocalDateTime.of(num(s, i, 4), num(s, i + 5, 2), num(s, i + 8, 2),
                    num(s, i + 11, 2), num(s, i + 14, 2), num(s, i + 17, 2));
            int j = i + 19;
            double fraction = 0;
            if (j < s.length() && (s.charAt(j) == ',' || s.charAt(j) == '.')) {
                int start = j + 1;
                int end = LineFields.digitsEnd(s, start);
                if (end > start) {
                    fraction = Double.parseDouble("0." + s.substring(start, Math.min(end, start + 9)));
                    j = end;
                }
            }
            ZoneId at = zone;
            if (j < s.length()) {
                char c = s.charAt(j);
                if (c == 'Z') {
                    at = ZoneOffset.UTC;
                } else if ((c == '+' || c == '-') && j + 3 <= s.length() && digits(s, j + 1, 2)) {
                    int hours = num(s, j + 1, 2);
                    int k = j + 3;
                    if (k < s.length() && s.charAt(k) == ':') {
                        k++;
                    }
                    int minutes = k + 2 <= s.length() && digits(s, k, 2) ? num(s, k, 2) : 0;
                    int sign = c == '-' ? -1 : 1;
                    at = ZoneOffset.ofHoursMinutes(sign * hours, sign * minutes);
                }
            }
            return local.atZone(at).toEpochSecond() + fraction;
        } catch (DateTimeException | NumberFormatException e) {
            return null;
        }
    }

    /** torchrun's {@code [rank3]:} or {@code [default3]:} ({@code --tee}/{@code --log-line-prefix-template}). */
    static Integer rankPrefix(String s) {
        if (s.isEmpty() || s.charAt(0) != '[') {
            return null;
        }
        int close = s.indexOf("]:");
        if (close < 0 || close > 16) {
            return null;
        }
        int i = 1;
        while (i < close && !LineFields.isDigit(s.charAt(i))) {
            i++;
        }
        String word = s.substring(1, i);
        if (i == close || !(word.equals("rank") || word.equals("default"))) {
            return null;
        }
        if (LineFields.digitsEnd(s, i) != close) {
            return null;
        }
        long r = LineFields.longAt(s, i);
        return r < 0 || r > Integer.MAX_VALUE ? null : (int) r;
    }
}
