package dev.trainwatch.agent.attribution;

/**
 * The fields of {@code /proc/PID/stat} the agent uses. Immutable.
 *
 * @param pid            process id
 * @param comm           command name as the kernel keeps it (at most 15 characters, may contain spaces and parentheses)
 * @param ppid           parent process id
 * @param startTimeTicks start time in clock ticks after boot: with the pid, the identity of a process (pids are reused)
 * @param utimeTicks     user CPU time in clock ticks
 * @param stimeTicks     system CPU time in clock ticks
 * @param rssPages       resident set size in pages
 * @param state          the kernel's state letter: R running, S sleeping, D uninterruptible (I/O), Z zombie, T stopped
 */
public record ProcStat(long pid, String comm, long ppid, long startTimeTicks, long utimeTicks, long stimeTicks,
                       long rssPages, char state) {

    /** Clock ticks per second of {@code utime}/{@code stime} on Linux (USER_HZ). */
    public static final double TICKS_PER_SECOND = 100.0;

    /** A stat without a known state. */
    public ProcStat(long pid, String comm, long ppid, long startTimeTicks, long utimeTicks, long stimeTicks,
                    long rssPages) {
        this(pid, comm, ppid, startTimeTicks, utimeTicks, stimeTicks, rssPages, '?');
    }

    /** User plus system CPU time, in seconds. */
    public double cpuSeconds() {
        return (utimeTicks + stimeTicks) / TICKS_PER_SECOND;
    }

    /**
     * Parses one {@code stat} line in the kernel's format: {@code pid (comm) state ppid ... starttime ...}. The
     * command name is bounded by the first '(' and the LAST ')', because it may itself contain ')' and spaces.
     *
     * @throws IllegalArgumentException when the line is not in that format
     */
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

    private static String abbreviate(String line) {
        return line.length() > 80 ? line.substring(0, 80) + "…" : line;
    }
}
