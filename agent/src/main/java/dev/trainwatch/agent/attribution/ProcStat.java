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

    public double cpuSeconds() {
        return (utimeTicks + stimeTicks) / TICKS_PER_SECOND;
    }

    /**
     * {@code pid (comm) state ppid ...}: comm ends at the LAST ')'; the fields after it are separated by spaces.
     * IllegalArgumentException when not that format. Scanned without a regex or a string per field: the agent reads
     * every rank's stat file at each poll.
     */
    public static ProcStat parse(String line) {
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        if (open <= 0 || close < open) {
            throw new IllegalArgumentException("not a /proc stat line: " + abbreviate(line));
        }
        // bounds[2k], bounds[2k + 1]: where field k + 3 of proc(5) starts and ends (field 3 is the state)
        int[] bounds = new int[2 * FIELDS];
        int n = 0;
        int at = close + 1;
        int stop = line.length();
        while (n < FIELDS) {
            while (at < stop && Character.isWhitespace(line.charAt(at))) {
                at++;
            }
            if (at == stop) {
                throw new IllegalArgumentException("short /proc stat line: " + abbreviate(line));
            }
            bounds[2 * n] = at;
            while (at < stop && !Character.isWhitespace(line.charAt(at))) {
                at++;
            }
            bounds[2 * n + 1] = at;
            n++;
        }
        try {
            return new ProcStat(Long.parseLong(line.substring(0, open).strip()), line.substring(open + 1, close),
                    field(line, bounds, 4), field(line, bounds, 22), field(line, bounds, 14), field(line, bounds, 15),
                    field(line, bounds, 24), line.charAt(bounds[0]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad number in /proc stat line: " + abbreviate(line), e);
        }
    }

    /** The fields up to rss (field 24 of proc(5)) from field 3 on. */
    private static final int FIELDS = 22;

    /** Field {@code number} of proc(5) as a long. */
    private static long field(String line, int[] bounds, int number) {
        int k = number - 3;
        return Long.parseLong(line, bounds[2 * k], bounds[2 * k + 1], 10);
    }

    /** As {@link #parse(String)}, from a stat file's bytes. */
    public static ProcStat parse(byte[] raw, int length) {
        return parse(new String(raw, 0, length, StandardCharsets.UTF_8).strip());
    }

    private static String abbreviate(String line) {
        return line.length() > 80 ? line.substring(0, 80) + "…" : line;
    }
}
