package dev.trainwatch.agent.failure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What torchrun (torch.distributed.elastic) and the shell said about a crashed run's processes, read from its output
 * tail: the ranks that failed with their exit codes (the {@code ChildFailedError} block, the agent's
 * {@code failed (exitcode: N) local_rank: R} line), a signal the launcher itself received (a stop from outside), and
 * bash's job line for a killed command. Pure; built by {@link #read(List)}.
 *
 * @param failures        rank → exit code as torchrun reports them (negative: killed by that signal), in the order
 *                        read (the block's root cause first)
 * @param launcherSignal  the signal torchrun itself received ({@code Received 15 death signal}, Python's
 *                        {@code SignalException: Process N got signal: 15}, or {@code closing signal SIGHUP/SIGINT}),
 *                        or null
 * @param launcherLines   the lines that say so
 * @param shellKilled     bash's {@code line N: PID Killed  CMD} line, or null
 */
record LauncherReport(Map<Integer, Integer> failures, Integer launcherSignal, List<String> launcherLines,
                      String shellKilled) {

    private static final Pattern BLOCK_RANK = Pattern.compile("^\\s*rank\\s*:\\s*(\\d+)");
    private static final Pattern BLOCK_EXIT = Pattern.compile("^\\s*exitcode\\s*:\\s*(-?\\d+)");
    private static final Pattern AGENT_FAILED = Pattern.compile("failed \\(exitcode: (-?\\d+)\\) local_rank: (\\d+)");
    private static final Pattern DEATH_SIGNAL = Pattern.compile("Received (?:(\\d+)|Signals\\.(SIG\\w+)) death signal");
    private static final Pattern GOT_SIGNAL = Pattern.compile("SignalException: Process \\d+ got signal: "
            + "(?:(\\d+)|Signals\\.(SIG\\w+))");
    /** torchrun passes on the signal it got; SIGTERM it also sends itself to clean up after a failed worker. */
    private static final Pattern CLOSING = Pattern.compile("closing signal (SIGHUP|SIGINT)\\b");
    private static final Pattern SHELL_KILLED = Pattern.compile("line \\d+:\\s+\\d+ Killed\\s+\\S");

    static LauncherReport read(List<String> lines) {
        Map<Integer, Integer> failures = new LinkedHashMap<>();
        Integer signal = null;
        List<String> signalLines = new ArrayList<>();
        String shell = null;
        boolean rootCause = false;
        Integer pendingRank = null;
        Map<Integer, Integer> root = new LinkedHashMap<>();
        for (String line : lines) {
            if (line.contains("Root Cause (first observed failure)")) {
                rootCause = true;
            }
            Matcher m = BLOCK_RANK.matcher(line);
            if (m.find()) {
                pendingRank = intOrNull(m.group(1));
                continue;
            }
            m = BLOCK_EXIT.matcher(line);
            if (m.find() && pendingRank != null) {
                Integer code = intOrNull(m.group(1));
                if (code != null) {
                    (rootCause ? root : failures).putIfAbsent(pendingRank, code);
                }
                pendingRank = null;
                continue;
            }
            m = AGENT_FAILED.matcher(line);
            if (m.find()) {
                Integer rank = intOrNull(m.group(2));
                Integer code = intOrNull(m.group(1));
                if (rank != null && code != null) {
                    root.putIfAbsent(rank, code);
                }
            }
            Integer sig = launcherSignal(line);
            if (sig != null) {
                if (signal == null) {
                    signal = sig;
                }
                signalLines.add(line);
            }
            if (shell == null && SHELL_KILLED.matcher(line).find()) {
                shell = line;
            }
        }
        Map<Integer, Integer> ordered = new LinkedHashMap<>(root);
        failures.forEach(ordered::putIfAbsent);
        return new LauncherReport(ordered, signal, signalLines, shell);
    }

    private static Integer launcherSignal(String line) {
        for (Pattern p : new Pattern[] {DEATH_SIGNAL, GOT_SIGNAL}) {
            Matcher m = p.matcher(line);
            if (m.find()) {
                return m.group(1) != null ? intOrNull(m.group(1)) : Signals.number(m.group(2));
            }
        }
        Matcher m = CLOSING.matcher(line);
        return m.find() ? Signals.number(m.group(1)) : null;
    }

    /** The first rank torchrun reports killed by a signal, or null. */
    Integer signalledRank() {
        for (Map.Entry<Integer, Integer> e : failures.entrySet()) {
            if (e.getValue() < 0) {
                return e.getKey();
            }
        }
        return null;
    }

    /** The signal that killed {@link #signalledRank()}, or null. */
    Integer rankSignal() {
        for (Map.Entry<Integer, Integer> e : failures.entrySet()) {
            if (e.getValue() < 0) {
                return -e.getValue();
            }
        }
        return null;
    }

    /**
     * The rank that failed first when the report can tell: one killed by a signal other than SIGTERM (the others exit 1
     * after it); else the only one that exited with an error of its own, since torchrun SIGTERMs the other workers when
     * one fails (in a run's first seconds its report can list the cleaned-up rank as the root cause: their times are in
     * whole seconds); else one killed by SIGTERM, or the only one that failed. Null when several exited alike.
     */
    Integer firstFailedRank() {
        Integer sigterm = null;
        Integer exited = null;
        int exitedCount = 0;
        for (Map.Entry<Integer, Integer> e : failures.entrySet()) {
            int code = e.getValue();
            if (code < 0 && code != -SIGTERM) {
                return e.getKey();
            }
            if (code == -SIGTERM && sigterm == null) {
                sigterm = e.getKey();
            } else if (code > 0) {
                exitedCount++;
                exited = exited == null ? e.getKey() : exited;
            }
        }
        if (exitedCount == 1) {
            return exited;
        }
        if (sigterm != null) {
            return sigterm;
        }
        return failures.size() == 1 ? failures.keySet().iterator().next() : null;
    }

    private static final int SIGTERM = 15;

    private static Integer intOrNull(String digits) {
        try {
            return Integer.parseInt(digits);
        } catch (NumberFormatException tooLong) {
            return null;
        }
    }
}
