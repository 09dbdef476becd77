package dev.trainwatch.agent.attribution;

import java.nio.charset.StandardCharsets;
import java.util.StringTokenizer;

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
     * {@code pid (comm) state ppid ...}: comm ends at the LAST ')'; the fields after it are separated by whitespace.
     * IllegalArgumentException when not that format. Split without a regex: the agent reads every rank's stat file at
     * each poll.
     */
    public static ProcStat parse(String line) {
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        if (open <= 0 || close < open) {
            throw new IllegalArgumentException("not a /proc stat line: " + abbreviate(line));
        }
        StringTokenizer rest = new StringTokenizer(line.substring(close + 1));
        String[] f = new String[22]; // f[k] is field k + 3 of proc(5): the state, ppid, ... up to rss (24)
        for (int k = 0; k < f.length; k++) {
            if (!rest.hasMoreTokens()) {
                throw new IllegalArgumentException("short /proc stat line: " + abbreviate(line));
            }
            f[k] = rest.nextToken();
        }
        try {
            return new ProcStat(Long.parseLong(line.substring(0, open).strip()), line.substring(open + 1, close),
                    Long.parseLong(f[1]), Long.parseLong(f[19]), Long.parseLong(f[11]), Long.parseLong(f[12]),
                    Long.parseLong(f[21]), f[0].charAt(0));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad number in /proc stat line: " + abbreviate(line), e);
        }
    }

    /** As {@link #parse(String)}, from a stat file's bytes (its newline is whitespace to the tokenizer). */
    public static ProcStat parse(byte[] raw, int length) {
        return parse(new String(raw, 0, length, StandardCharsets.UTF_8));
    }

    private static String abbreviate(String line) {
        return line.length() > 80 ? line.substring(0, 80) + "…" : line;
    }
}
