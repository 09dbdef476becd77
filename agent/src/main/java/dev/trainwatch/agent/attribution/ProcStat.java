package dev.trainwatch.agent.attribution;

import java.nio.charset.StandardCharsets;

/**
 * The fields of {@code /proc/PID/stat} the agent uses. {@code comm}: at most 15 characters, may hold spaces and
 * parentheses; {@code startTimeTicks} with the pid identify a process (pids are reused); {@code rssPages} in pages;
 * {@code state}: R, S, D (I/O), Z, T.
 */
public record ProcStat(long pid, String comm, long ppid, long startTimeTicks, long utimeTicks, long stimeTicks,
                       long rssPages, char state) {
    public static final double TICKS_PER_SECOND = 100.0;

    public ProcStat(long pid, String comm, long ppid, long startTimeTicks, long utimeTicks, long stimeTicks,
                    long rssPages) {
        this(pid, comm, ppid, startTimeTicks, utimeTicks, stimeTicks, rssPages, '?');
    }

    public double cpuSeconds() {
        return (utimeTicks + stimeTicks) / TICKS_PER_SECOND;
    }

    /** {@code pid (comm) state ppid ...}: comm ends at the LAST ')'. IllegalArgumentException when not that format. */
    public static ProcStat parse(String line) {
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        if (open <= 0 || close < open) {
            throw new IllegalArgumentException("not a /proc stat line: " + abbreviate(line));
        }
        long pid = Long.parseLong(line.substring(0, open).strip());
        String comm = line.substring(open + 1, close);
        String[] rest = line.substring(close + 1).strip().split(" +");
        // rest[0] is field 3 (state); field N of proc(5) is rest[N - 3].
        if (rest.length < 22) {
            throw new IllegalArgumentException("short /proc stat line: " + abbreviate(line));
        }
        try {
            return new ProcStat(pid, comm, Long.parseLong(rest[1]), Long.parseLong(rest[19]),
                    Long.parseLong(rest[11]), Long.parseLong(rest[12]), Long.parseLong(rest[21]),
                    rest[0].isEmpty() ? '?' : rest[0].charAt(0));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad number in /proc stat line: " + abbreviate(line), e);
        }
    }

    /** As {@link #parse(String)} from a stat file's bytes, without strings or regex split (read for every process). */
    public static ProcStat parse(byte[] raw, int length) {
        int open = -1;
        int close = -1;
        for (int i = 0; i < length; i++) {
            if (raw[i] == '(') {
                open = i;
                break;
            }
        }
        for (int i = length - 1; i > open; i--) {
            if (raw[i] == ')') {
                close = i;
                break;
            }
        }
        if (open <= 0 || close < open) {
            return parse(line(raw, length)); // throws with the line in its message
        }
        int[] start = new int[22];
        int[] end = new int[22];
        int at = close + 1;
        int stop = length;
        while (stop > at && Character.isWhitespace(raw[stop - 1])) {
            stop--;
        }
        while (at < stop && Character.isWhitespace(raw[at])) {
            at++;
        }
        int n = 0;
        while (at < stop && n < 22) {
            int from = at;
            while (at < stop && raw[at] != ' ') {
                at++;
            }
            start[n] = from;
            end[n] = at;
            n++;
            while (at < stop && raw[at] == ' ') {
                at++;
            }
        }
        int pidEnd = open;
        while (pidEnd > 0 && raw[pidEnd - 1] == ' ') {
            pidEnd--;
        }
        long pid = number(raw, 0, pidEnd);
        long ppid = number(raw, start[1], end[1]);
        long startTime = number(raw, start[19], end[19]);
        long utime = number(raw, start[11], end[11]);
        long stime = number(raw, start[12], end[12]);
        long rss = number(raw, start[21], end[21]);
        if (n < 22 || pid == NOT_PLAIN || ppid == NOT_PLAIN || startTime == NOT_PLAIN || utime == NOT_PLAIN
                || stime == NOT_PLAIN || rss == NOT_PLAIN || raw[start[0]] < 0) {
            return parse(line(raw, length));
        }
        String comm = new String(raw, open + 1, close - open - 1, StandardCharsets.UTF_8);
        return new ProcStat(pid, comm, ppid, startTime, utime, stime, rss, (char) raw[start[0]]);
    }

    private static final long NOT_PLAIN = Long.MIN_VALUE;

    private static long number(byte[] raw, int from, int to) {
        if (from >= to || to - from > 18) {
            return NOT_PLAIN;
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            int d = raw[i] - '0';
            if (d < 0 || d > 9) {
                return NOT_PLAIN;
            }
            value = value * 10 + d;
        }
        return value;
    }

    private static String line(byte[] raw, int length) {
        return new String(raw, 0, length, StandardCharsets.UTF_8).strip();
    }

    private static String abbreviate(String line) {
        return line.length() > 80 ? line.substring(0, 80) + "…" : line;
    }
}
