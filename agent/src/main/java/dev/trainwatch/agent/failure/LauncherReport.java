package dev.trainwatch.agent.failure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What torchrun said about a crashed run's processes: failed ranks and exit codes (the
 * {@code ChildFailedError} block, {@code failed (exitcode: N) local_rank: R}; negative: killed by that signal), a signal
 * torchrun itself got ({@code Received 15 death signal}, {@code SignalException: Process N got signal: 15},
 * {@code closing signal SIGHUP/SIGINT}).
 */
record LauncherReport(Map<Integer, Integer> failures, Integer launcherSignal, List<String> launcherLines) {
    private static final Pattern BLOCK_RANK = Pattern.compile("^\\s*rank\\s*:\\s*(\\d+)");
    private static final Pattern BLOCK_EXIT = Pattern.compile("^\\s*exitcode\\s*:\\s*(-?\\d+)");
    private static final Pattern AGENT_FAILED = Pattern.compile("failed \\(exitcode: (-?\\d+)\\) local_rank: (\\d+)");
    private static final Pattern DEATH_SIGNAL = Pattern.compile("Received (?:(\\d+)|Signals\\.(SIG\\w+)) death signal");
    private static final Pattern GOT_SIGNAL = Pattern.compile("SignalException: Process \\d+ got signal: "
            + "(?:(\\d+)|Signals\\.(SIG\\w+))");
    private static final Pattern CLOSING = Pattern.compile("closing signal (SIGHUP|SIGINT)\\b");

    static LauncherReport read(List<String> lines) {
        Map<Integer, Integer> failures = new LinkedHashMap<>();
        Integer signal = null;
        List<String> signalLines = new ArrayList<>();
        boolean rootCause = false;
        Integer pendingRank = null;
        Map<Integer, Integer> root = new LinkedHashMap<>();
        for (String line : lines) {
            if (line.contains("Root Cause (first observed failure)")) {
                rootCause = true;
            }
            Matcher m = BLOCK_RANK.matcher(line);
            if (m.find()) {
                pendingRank = FailureClassifier.intOrNull(m.group(1));
                continue;
            }
            m = BLOCK_EXIT.matcher(line);
            if (m.find() && pendingRank != null) {
                Integer code = FailureClassifier.intOrNull(m.group(1));
                if (code != null) {
                    (rootCause ? root : failures).putIfAbsent(pendingRank, code);
                }
                pendingRank = null;
                continue;
            }
            m = AGENT_FAILED.matcher(line);
            if (m.find()) {
                Integer rank = FailureClassifier.intOrNull(m.group(2));
                Integer code = FailureClassifier.intOrNull(m.group(1));
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
        }
        Map<Integer, Integer> ordered = new LinkedHashMap<>(root);
        failures.forEach(ordered::putIfAbsent);
        return new LauncherReport(ordered, signal, signalLines);
    }

    private static Integer launcherSignal(String line) {
        for (Pattern p : new Pattern[] {DEATH_SIGNAL, GOT_SIGNAL}) {
            Matcher m = p.matcher(line);
            if (m.find()) {
                return m.group(1) != null ? FailureClassifier.intOrNull(m.group(1)) : Signals.number(m.group(2));
            }
        }
        Matcher m = CLOSING.matcher(line);
        return m.find() ? Signals.number(m.group(1)) : null;
    }

    Integer signalledRank() {
        return failures.entrySet().stream().filter(e -> e.getValue() < 0).map(Map.Entry::getKey).findFirst()
                .orElse(null);
    }

    Integer rankSignal() {
        return failures.values().stream().filter(code -> code < 0).map(code -> -code).findFirst().orElse(null);
    }

    /**
     * One killed by a signal other than SIGTERM; else the only one that failed on its own (torchrun SIGTERMs the rest, and
     * its whole-second times can list a cleaned-up rank as root cause); else one SIGTERMed, or the only one. Null: a tie.
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
}
