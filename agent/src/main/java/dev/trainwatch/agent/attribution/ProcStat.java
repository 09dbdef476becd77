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

    /** As {@link #parse(String)}, from a stat file's bytes. */
    public static ProcStat parse(byte[] raw, int length) {
        return parse(new String(raw, 0, length, StandardCharsets.UTF_8).strip());
    }

    private static String abbreviate(String line) {
        return line.length() > 80 ? line.substring(0, 80) + "…" : line;
    }
}
