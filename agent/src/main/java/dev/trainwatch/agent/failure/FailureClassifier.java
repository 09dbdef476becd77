package dev.trainwatch.agent.failure;

import dev.trainwatch.protocol.RunFailure;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * Reads a crashed run's output tail and says why it died, with the decisive lines' figures. Pure. The root cause wins:
 * lost GPU, XID, CUDA OOM, host memory, NCCL timeout, signal, exception, for an OOM rank leaves the others waiting
 * until NCCL's watchdog fires and torchrun kills everyone. The launcher's own traceback (torchrun's
 * {@code ChildFailedError}, accelerate's {@code CalledProcessError}) is not an exception of the run.
 */
public final class FailureClassifier {

    static final int MAX_LINES = 12;
    static final int MAX_LINE_CHARS = 500;

    private static final Pattern RANK_PREFIX = Pattern.compile("\\[(?:rank|default)(\\d+)\\]:");
    private static final Pattern OOM = Pattern.compile("(CUDA out of memory|OutOfMemoryError|CUDA error: out of memory"
            + "|CUBLAS_STATUS_ALLOC_FAILED|Tried to allocate [0-9.]+ ?[KMGT]i?B \\(GPU \\d+; [0-9.]+ ?[KMGT]i?B total capac)");
    private static final Pattern TRIED = Pattern.compile("Tried to allocate ([0-9.]+) ?([KMGT]i?B)");
    private static final Pattern GPU_INDEX = Pattern.compile("\\(GPU (\\d+);|GPU (\\d+) has a total capac");
    private static final Pattern TOTAL = Pattern.compile("([0-9.]+) ?([KMGT]i?B) total capacity|total capac\\w* of "
            + "([0-9.]+) ?([KMGT]i?B)");
    private static final Pattern RESERVED = Pattern.compile("([0-9.]+) ?([KMGT]i?B) reserved in total by PyTorch");
    private static final Pattern RESERVED_UNALLOCATED = Pattern.compile("([0-9.]+) ?([KMGT]i?B) is reserved by PyTorch "
            + "but unallocated");
    /** Free on the GPU: "of which 98.31 MiB is free" (2.x), "0 bytes free" (1.x). */
    private static final Pattern FREE = Pattern.compile("of which ([0-9.]+) ?([KMGT]i?B|bytes) is free"
            + "|([0-9.]+) ?([KMGT]i?B|bytes) free\\b");
    private static final Pattern THIS_PROCESS = Pattern.compile("this process has ([0-9.]+) ?([KMGT]i?B) memory in use");
    private static final Pattern OTHER_PROCESS = Pattern.compile("Process (\\d+) has ([0-9.]+) ?([KMGT]i?B) memory in "
            + "use");
    private static final Pattern CONTINUATION = Pattern.compile("^\\s*(?:[a-z][a-z_ ]*[a-z][;,]?\\s|[0-9.]+ ?"
            + "(?:[KMGT]i?B|bytes)\\b)(?!.*\\|)");
    private static final Pattern ALLOCATED = Pattern.compile("([0-9.]+) ?([KMGT]i?B) already allocated"
            + "|Of the allocated memory ([0-9.]+) ?([KMGT]i?B) is allocated by PyTorch");
    private static final Pattern NCCL = Pattern.compile("Watchdog caught collective operation timeout|NCCL communicator "
            + "was aborted|ProcessGroupNCCL.*(timed out|[Tt]imeout)|NCCL timeout");
    /** Errors a rank meets because another failed first (peer closed, store lost, torchrun stopped it). */
    private static final Pattern CONSEQUENCE = Pattern.compile("Connection closed by (remote )?peer|Connection reset by "
            + "peer|DistBackendError|DistNetworkError|DistStoreError|NCCL communicator was aborted|Watchdog caught "
            + "collective|ProcessGroupNCCL|NCCL error|ncclRemoteError|ncclInternalError|ncclSystemError|SignalException"
            + "|KeyboardInterrupt|Broken pipe");
    private static final Pattern NCCL_WORK = Pattern.compile("WorkNCCL\\(SeqNum=(\\d+), OpType=(\\w+).*?"
            + "Timeout\\(ms\\)=(\\d+)\\)(?: ran for (\\d+) milliseconds)?");
    private static final Pattern NCCL_RANK = Pattern.compile("\\[Rank (\\d+)\\]");
    private static final Pattern GPU_LOST = Pattern.compile("fallen off the bus|GPU is lost|Unable to determine the "
            + "device handle|Xid \\(PCI:[^)]*\\): 79\\b|CUDA error: unknown error|cuda runtime error \\(30\\)");
    private static final Pattern XID = Pattern.compile("illegal memory access|unspecified launch failure|uncorrectable "
            + "ECC error|Xid \\(PCI:[^)]*\\): (\\d+)|an illegal instruction was encountered|misaligned address");
    private static final Pattern HOST_OOM = Pattern.compile("DataLoader worker \\(pid[ s(]*(\\d+)\\)?\\)? is killed by"
            + "(\\s+signal: (Killed|Bus error)|\\s*(signal:?)?\\s*$)|insufficient shared memory|out of shared memory"
            + "|Out of memory: Kill(ed)? process|oom-kill|invoked oom-killer|\\bMemoryError\\b");
    private static final Pattern KERNEL_KILL = Pattern.compile("Out of memory: Kill(?:ed)? process (\\d+) \\(([^)]{1,64})\\)");
    private static final Pattern NAN_LOSS = Pattern.compile("(?i)\\bloss (?:is|became|was) (?:nan|inf)\\b");
    private static final Pattern SIGNAL = Pattern.compile("exitcode\\s*:\\s*-(\\d+)|Signal (\\d+) \\((SIG\\w+)\\) "
            + "received|Signals\\.(SIG\\w+)|DUE TO (PREEMPTION|TIME LIMIT|NODE FAILURE)|^\\s*Killed\\s*$"
            + "|exits with return code = -(\\d+)|line \\d+:\\s+\\d+ (Killed)\\s+\\S");
    private static final Pattern EXCEPTION = Pattern.compile("^\\s*(?:\\[(?:rank|default)\\d+\\]:\\s*)?([A-Za-z_][\\w.]*"
            + "(?:Error|Exception|Interrupt))(?::\\s?(.*))?$");
    private static final Pattern TRACEBACK = Pattern.compile("Traceback \\(most recent call last\\)");
    private static final Pattern FRAME = Pattern.compile("File \"([^\"]+)\"|^\\s*[│|]\\s*(\\S+\\.py):\\d+ in ");
    private static final Pattern LAUNCHER_FRAME = Pattern.compile("bin/torchrun|bin/accelerate|runpy\\.py|<frozen runpy>"
            + "|torch/distributed/(run|launch)\\.py|torch/distributed/elastic/|torch/distributed/launcher/"
            + "|accelerate/commands/|deepspeed/launcher/");
    private static final Pattern LAUNCHER_EXCEPTION = Pattern.compile("ChildFailedError|CalledProcessError");

    private FailureClassifier() {
    }

    /** {@code exitCode}: 128 + N for a signal, or null; {@code unknown} when nothing says why. */
    public static RunFailure classify(List<String> tail, Integer exitCode) {
        List<String> lines = tail.stream().map(l -> l == null ? "" : l).toList();
        LauncherReport launcher = Objects.requireNonNullElse(safe(() -> LauncherReport.read(lines)),
                new LauncherReport(Map.of(), null, List.of()));
        RunFailure f;
        if ((f = safe(() -> gpuLost(lines))) == null && (f = safe(() -> xid(lines))) == null
                && (f = safe(() -> cudaOom(lines))) == null && (f = safe(() -> hostOom(lines))) == null
                && (f = safe(() -> launcherStop(launcher))) == null
                && (f = safe(() -> nanLoss(lines))) == null
                && (f = safe(() -> exception(lines, true))) == null
                && (f = safe(() -> ncclTimeout(lines))) == null
                && (f = safe(() -> signal(lines, exitCode, launcher))) == null
                && (f = safe(() -> exception(lines, false))) == null) {
            f = new RunFailure("unknown", exitCode != null && exitCode != 0
                    ? "exited with code " + exitCode + "; the output does not say why"
                    : "the output does not say why the run ended", exitCode, null, rankOf(lines),
                    Map.of(), shown(lastLines(lines, 6)));
        }
        Integer rank = f.rank() == null && launcher.launcherSignal() == null && !"unknown".equals(f.cause())
                ? launcher.firstFailedRank() : f.rank();
        return new RunFailure(f.cause(), f.summary(), exitCode, f.signal() != null ? f.signal() : signalOf(exitCode),
                rank, new LinkedHashMap<>(f.detail()), f.lines());
    }

    /** A line it cannot read (two ranks' output interleaved into "2.02.00 GiB") gives no verdict rather than a crash. */
    private static <T> T safe(Supplier<T> stage) {
        try {
            return stage.get();
        } catch (RuntimeException unreadable) {
            return null;
        }
    }

    /** torchrun was stopped by a signal (SIGTERM, preemption, SIGHUP, Ctrl-C): the ranks' tracebacks are consequences. */
    private static RunFailure launcherStop(LauncherReport launcher) {
        Integer sig = launcher.launcherSignal();
        if (sig == null) {
            return null;
        }
        String name = Signals.name(sig);
        String why = switch (sig) {
            case 1 -> "the terminal or ssh session that started it closed (SIGHUP): start it under nohup, tmux or the "
                    + "scheduler";
            case 2 -> "it was interrupted (SIGINT, Ctrl-C)";
            case 15 -> "a scheduler, preemption or an operator stopped it (SIGTERM)";
            default -> "it received " + name;
        };
        Map<String, Object> detail = new LinkedHashMap<>();
        put(detail, "signal_name", name);
        return new RunFailure("signal", "torchrun was stopped and stopped the ranks: " + why, null, sig, null, detail,
                shown(launcher.launcherLines()));
    }

    private static Integer signalOf(Integer exitCode) {
        return exitCode != null && exitCode > 128 && exitCode < 160 ? exitCode - 128 : null;
    }

    private static RunFailure gpuLost(List<String> lines) {
        List<String> hits = matching(lines, GPU_LOST);
        if (hits.isEmpty()) {
            return null;
        }
        return new RunFailure("gpu_lost", "a GPU was lost: " + clip(hits.get(0).strip(), 200), null, null,
                rankOf(hits), Map.of(), shown(hits));
    }

    private static RunFailure xid(List<String> lines) {
        List<String> hits = matching(lines, XID);
        if (hits.isEmpty()) {
            return null;
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        hits.stream().map(XID::matcher).filter(m -> m.find() && m.group(1) != null).findFirst()
                .ifPresent(m -> put(detail, "xid", intOrNull(m.group(1))));
        String first = hits.get(0);
        String what = first.contains("illegal memory access") ? "an illegal memory access"
                : first.contains("unspecified launch failure") ? "an unspecified launch failure"
                : first.contains("ECC") ? "an uncorrectable ECC error" : "a GPU fault";
        return new RunFailure("xid", "the GPU reported " + what + (detail.containsKey("xid")
                ? " (XID " + detail.get("xid") + ")" : ""), null, null, rankOf(hits), detail, shown(hits));
    }

    private static RunFailure cudaOom(List<String> lines) {
        List<String> hits = matching(lines, OOM);
        if (hits.isEmpty()) {
            return null;
        }
        String decisive = hits.stream().filter(h -> TRIED.matcher(h).find()).findFirst().orElse(hits.get(0));
        // torch 1.x's message is often wrapped over a few lines (a terminal, a pasted issue)
        String text = withContinuation(lines, decisive);
        Map<String, Object> detail = oomFigures(text);
        StringBuilder summary = new StringBuilder("CUDA out of memory");
        if (detail.containsKey("tried_to_allocate_bytes")) {
            summary.append(": tried to allocate ").append(gib((Long) detail.get("tried_to_allocate_bytes")));
        }
        if (detail.containsKey("gpu_index")) {
            summary.append(" on GPU ").append(detail.get("gpu_index"));
        }
        if (detail.containsKey("total_capacity_bytes")) {
            summary.append(" (").append(gib((Long) detail.get("total_capacity_bytes"))).append(" total");
            if (detail.containsKey("free_bytes")) {
                summary.append(", ").append(gib((Long) detail.get("free_bytes"))).append(" free");
            }
            if (detail.containsKey("reserved_bytes")) {
                summary.append(", ").append(gib((Long) detail.get("reserved_bytes"))).append(" reserved by PyTorch");
            }
            summary.append(')');
        }
        if (detail.get("other_processes_bytes") instanceof Long others) {
            summary.append("; other processes hold ").append(gib(others)).append(" on the GPU (PID ")
                    .append(detail.get("other_process_pids")).append(')');
        }
        return new RunFailure("cuda_oom", summary.toString(), null, null, rankOf(List.of(decisive)), detail,
                shown(around(lines, lines.indexOf(decisive))));
    }

    private static Map<String, Object> oomFigures(String text) {
        Map<String, Object> detail = new LinkedHashMap<>();
        putBytes(detail, "tried_to_allocate_bytes", TRIED.matcher(text));
        Matcher m = GPU_INDEX.matcher(text);
        if (m.find()) {
            put(detail, "gpu_index", intOrNull(m.group(1) != null ? m.group(1) : m.group(2)));
        }
        putBytes(detail, "total_capacity_bytes", TOTAL.matcher(text));
        putBytes(detail, "free_bytes", FREE.matcher(text));
        putBytes(detail, "process_in_use_bytes", THIS_PROCESS.matcher(text));
        putBytes(detail, "reserved_bytes", RESERVED.matcher(text));
        putBytes(detail, "allocated_bytes", ALLOCATED.matcher(text));
        putBytes(detail, "reserved_unallocated_bytes", RESERVED_UNALLOCATED.matcher(text));
        if (!detail.containsKey("reserved_bytes") && detail.get("allocated_bytes") instanceof Long allocated
                && detail.get("reserved_unallocated_bytes") instanceof Long unallocated) {
            put(detail, "reserved_bytes", allocated + unallocated);
        }
        otherProcesses(detail, text);
        return detail;
    }

    /** PyTorch 2.x: "Process 1108671 has 558.00 MiB memory in use". */
    private static void otherProcesses(Map<String, Object> detail, String text) {
        Matcher m = OTHER_PROCESS.matcher(text);
        StringBuilder pids = new StringBuilder();
        long total = 0;
        int count = 0;
        while (m.find()) {
            Long held = bytes(m.group(2), m.group(3));
            if (held == null) {
                continue;
            }
            pids.append(count == 0 ? "" : ", ").append(m.group(1));
            total += held;
            count++;
        }
        if (count > 0) {
            put(detail, "other_processes", count);
            put(detail, "other_process_pids", clip(pids.toString(), 300));
            put(detail, "other_processes_bytes", total);
        }
    }

    /** Up to three lines after the decisive one that continue it (wrapped by a terminal or a paste), joined. */
    private static String withContinuation(List<String> lines, String decisive) {
        int at = lines.indexOf(decisive);
        StringBuilder text = new StringBuilder(decisive);
        for (int i = at + 1; at >= 0 && i < lines.size() && i <= at + 3; i++) {
            String next = lines.get(i);
            if (!CONTINUATION.matcher(next).find()) {
                break;
            }
            text.append(' ').append(next.strip());
        }
        return text.toString();
    }

    private static RunFailure hostOom(List<String> lines) {
        List<String> hits = matching(lines, HOST_OOM);
        if (hits.isEmpty()) {
            return null;
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        String first = hits.get(0);
        Matcher m = Pattern.compile("pid[ s(]*(\\d+)").matcher(first);
        boolean shm = first.contains("Bus error") || first.contains("shared memory");
        String summary = shm ? "a DataLoader worker ran out of shared memory (/dev/shm)"
                : first.contains("DataLoader worker") ? "a DataLoader worker was killed (the host's OOM killer)"
                : first.contains("MemoryError") ? "Python ran out of host memory (MemoryError)"
                : "the kernel's OOM killer ended a process";
        put(detail, "resource", shm ? "shm" : "ram");
        Matcher kernel = KERNEL_KILL.matcher(first);
        if (kernel.find()) {
            put(detail, "killed_pid", longOrNull(kernel.group(1)));
            put(detail, "killed_command", kernel.group(2));
            summary = "the kernel's OOM killer ended process " + kernel.group(1) + " (" + kernel.group(2)
                    + "): the host ran out of memory";
        } else if (m.find()) {
            put(detail, "worker_pid", longOrNull(m.group(1)));
        }
        return new RunFailure("host_oom", summary, null, first.contains("Killed") ? 9 : null, rankOf(hits), detail,
                shown(hits));
    }

    private static final Pattern KERNEL_OOM_TASK = Pattern.compile("oom-kill:.*\\btask=([^,]{1,64}),pid=(\\d+)");
    private static final Pattern LAUNCHER_PID = Pattern.compile("\\(pid: (\\d+)\\)");

    /**
     * A SIGKILL judged against the kernel's log (read only then): {@code host_oom} when it records an OOM kill of one of
     * {@code pids} or a PID torchrun's report names; else the verdict says what the log showed, or that it was unreadable.
     */
    public static RunFailure confirmKill(RunFailure failure, Collection<Long> pids, List<String> tail,
                                         Supplier<KernelLog> kernelLog) {
        if (failure == null || !"signal".equals(failure.cause()) || !Integer.valueOf(9).equals(failure.signal())) {
            return failure;
        }
        Set<Long> candidates = new HashSet<>(pids);
        for (String line : tail) {
            Matcher m = LAUNCHER_PID.matcher(line);
            while (m.find()) {
                candidates.add(Long.parseLong(m.group(1)));
            }
        }
        KernelLog kernel = kernelLog.get();
        Map<String, Object> detail = new LinkedHashMap<>(failure.detail() == null ? Map.of() : failure.detail());
        if (!kernel.readable()) {
            detail.put("kernel_log", "not readable");
            return new RunFailure(failure.cause(), failure.summary() + "; the kernel log was not readable: cannot "
                    + "confirm a host OOM kill", failure.exitCode(), failure.signal(), failure.rank(), detail,
                    failure.lines());
        }
        for (String line : kernel.lines()) {
            Matcher kill = KERNEL_KILL.matcher(line);
            Matcher task = KERNEL_OOM_TASK.matcher(line);
            boolean byKill = kill.find();
            if (!byKill && !task.find()) {
                continue;
            }
            String pid = byKill ? kill.group(1) : task.group(2);
            String command = byKill ? kill.group(2) : task.group(1);
            if (candidates.contains(Long.parseLong(pid))) {
                Map<String, Object> oom = new LinkedHashMap<>();
                oom.put("resource", "ram");
                oom.put("killed_pid", Long.parseLong(pid));
                oom.put("killed_command", command);
                oom.put("kernel_log", "oom kill recorded");
                return new RunFailure("host_oom", "the kernel's OOM killer ended process " + pid + " (" + command
                        + "): the host ran out of memory", failure.exitCode(), 9, failure.rank(), oom,
                        List.of(line.strip()));
            }
        }
        detail.put("kernel_log", "no oom kill of the run's processes");
        return new RunFailure(failure.cause(), failure.summary() + "; the kernel log records no OOM kill of the run's "
                + "processes", failure.exitCode(), failure.signal(), failure.rank(), detail, failure.lines());
    }

    /** Without an exception after it the NaN is no verdict: many loops print it and train on. */
    private static RunFailure nanLoss(List<String> lines) {
        List<String> hits = matching(lines, NAN_LOSS);
        if (hits.isEmpty()) {
            return null;
        }
        RunFailure raised = exception(lines, false);
        if (raised == null) {
            return null;
        }
        Map<String, Object> detail = new LinkedHashMap<>(raised.detail());
        put(detail, "nan_loss", Boolean.TRUE);
        List<String> shown = new ArrayList<>(hits.subList(0, 1));
        shown.addAll(raised.lines());
        return new RunFailure("exception", "the loss became NaN (the run diverged): " + clip(hits.get(0).strip(), 200),
                null, null, rankOf(hits), detail, shown(shown));
    }

    private static RunFailure ncclTimeout(List<String> lines) {
        List<String> hits = matching(lines, NCCL);
        if (hits.isEmpty()) {
            return null;
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        Integer rank = null;
        for (String h : hits) {
            Matcher m = NCCL_WORK.matcher(h);
            if (m.find()) {
                put(detail, "op", m.group(2));
                put(detail, "seq", longOrNull(m.group(1)));
                put(detail, "timeout_ms", longOrNull(m.group(3)));
                put(detail, "ran_ms", m.group(4) == null ? null : longOrNull(m.group(4)));
                Matcher r = NCCL_RANK.matcher(h);
                if (r.find()) {
                    rank = intOrNull(r.group(1));
                }
                break;
            }
        }
        StringBuilder summary = new StringBuilder("an NCCL collective timed out");
        if (detail.containsKey("op")) {
            summary.append(": ").append(detail.get("op")).append(" #").append(detail.get("seq"))
                    .append(" waited ").append(Math.round(((Long) detail.get("timeout_ms")) / 1000.0)).append(" s");
        }
        summary.append("; every rank stops there when one rank does not arrive (a hung or dead rank, or a slow "
                + "network)");
        return new RunFailure("nccl_timeout", summary.toString(), null, null, rank != null ? rank : rankOf(hits),
                detail, shown(hits));
    }

    private static RunFailure signal(List<String> lines, Integer exitCode, LauncherReport launcher) {
        List<String> hits = matching(lines, SIGNAL);
        Integer sig = null;
        String name = null;
        for (String h : hits) {
            Matcher m = SIGNAL.matcher(h);
            if (m.find()) {
                if (m.group(1) != null) {
                    sig = intOrNull(m.group(1));
                } else if (m.group(2) != null) {
                    sig = intOrNull(m.group(2));
                    name = m.group(3);
                } else if (m.group(4) != null) {
                    name = m.group(4);
                } else if (m.group(5) != null) {
                    name = "SLURM " + m.group(5).toLowerCase(Locale.ROOT);
                } else if (m.group(6) != null) {
                    sig = intOrNull(m.group(6));
                } else {
                    sig = 9;
                }
                if (sig != null || name != null) {
                    break;
                }
            }
        }
        if (launcher.rankSignal() != null && (sig == null || sig.equals(launcher.rankSignal()))) {
            sig = launcher.rankSignal();
            name = null;
        }
        if (sig == null && name == null && signalOf(exitCode) != null) {
            sig = signalOf(exitCode);
        }
        if (sig == null && name == null) {
            return null;
        }
        if (name == null) {
            name = Signals.name(sig);
        }
        if (sig == null) {
            sig = Signals.number(name);
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        put(detail, "signal_name", name);
        if (sig != null && sig == 7) {
            put(detail, "resource", "shm");
            return new RunFailure("host_oom", "killed by SIGBUS: shared memory (/dev/shm) ran out, as DataLoader "
                    + "workers and NCCL use it", null, sig, rankOf(hits), detail, shown(hits));
        }
        if (sig != null && sig == 6) {
            return new RunFailure("unknown", "aborted (SIGABRT): NCCL's watchdog or a failed check in native code; "
                    + "the output does not say which", null, sig, rankOf(hits), detail, shown(hits));
        }
        String summary = "killed by " + name + (sig != null && sig == 9 ? " (the host's OOM killer, a scheduler or "
                + "an operator: check dmesg)" : sig != null && sig == 15 ? " (a scheduler, preemption or an operator)"
                : sig != null && sig == 11 ? " (a segmentation fault in native code)" : "");
        Integer rank = launcher.signalledRank() != null ? launcher.signalledRank() : rankOf(hits);
        return new RunFailure("signal", summary, null, sig, rank, detail, shown(hits.isEmpty() ? lastLines(lines, 4)
                : hits));
    }

    /** With {@code ownOnly}, the first not a consequence of another rank's failure; else the first of any. */
    private static RunFailure exception(List<String> lines, boolean ownOnly) {
        boolean runTraceback = IntStream.range(0, lines.size())
                .anyMatch(i -> TRACEBACK.matcher(lines.get(i)).find() && !launcherBlock(lines, i));
        String type = null;
        String message = null;
        int decisive = -1;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = EXCEPTION.matcher(line);
            if (m.find() && !LAUNCHER_EXCEPTION.matcher(m.group(1)).find()
                    && (runTraceback || line.contains("Error: "))
                    && !(ownOnly && CONSEQUENCE.matcher(line).find())) {
                type = m.group(1);
                message = m.group(2);
                decisive = i;
                break;
            }
        }
        if (type == null && (ownOnly || !runTraceback)) {
            return null;
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        put(detail, "type", type);
        if (message != null && !message.isBlank()) {
            put(detail, "message", clip(message.strip(), 300));
        }
        String summary = type == null ? "a Python exception (its type scrolled out of the output)"
                : "a Python exception: " + type + (message != null && !message.isBlank()
                        ? ": " + clip(message.strip(), 200) : "");
        List<String> shown = decisive >= 0 ? around(lines, decisive) : lastLines(lines, 6);
        return new RunFailure("exception", summary, null, null,
                decisive >= 0 ? rankOf(List.of(lines.get(decisive))) : null, detail, shown(shown));
    }

    private static boolean launcherBlock(List<String> lines, int start) {
        int frames = 0;
        int launcher = 0;
        for (int i = start + 1; i < lines.size() && i < start + 80; i++) {
            String l = lines.get(i);
            if (TRACEBACK.matcher(l).find()) {
                break;
            }
            Matcher f = FRAME.matcher(l);
            if (f.find()) {
                frames++;
                String path = f.group(1) != null ? f.group(1) : f.group(2);
                if (LAUNCHER_FRAME.matcher(path).find()) {
                    launcher++;
                }
            }
            if (EXCEPTION.matcher(l).find()) {
                break;
            }
        }
        return frames > 0 && launcher == frames;
    }

    private static List<String> matching(List<String> lines, Pattern p) {
        return lines.stream().filter(l -> p.matcher(l).find()).limit(MAX_LINES).toList();
    }

    /** Line {@code at} of {@code lines} (not the first line equal to it: ranks print the same error) and two before. */
    private static List<String> around(List<String> lines, int at) {
        return new ArrayList<>(lines.subList(Math.max(0, at - 2), at + 1));
    }

    private static List<String> lastLines(List<String> lines, int n) {
        return new ArrayList<>(lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }

    /** Each cut to {@value #MAX_LINE_CHARS} characters (figures were read from the whole line), at most {@value #MAX_LINES}. */
    private static List<String> shown(List<String> lines) {
        return lines.stream().limit(MAX_LINES).map(l -> clip(l, MAX_LINE_CHARS)).toList();
    }

    private static Integer rankOf(List<String> lines) {
        return lines.stream().map(RANK_PREFIX::matcher).filter(Matcher::find).findFirst()
                .map(m -> intOrNull(m.group(1))).orElse(null);
    }

    private static void putBytes(Map<String, Object> detail, String key, Matcher m) {
        if (m.find()) {
            String value = m.group(1) != null ? m.group(1) : m.group(3);
            String unit = m.group(1) != null ? m.group(2) : m.group(4);
            if (value != null) {
                put(detail, key, bytes(value, unit));
            }
        }
    }

    static Long bytes(String value, String unit) {
        double v;
        try {
            v = Double.parseDouble(value);
        } catch (NumberFormatException unreadable) {
            return null; // "2.02.00": two ranks' lines interleaved
        }
        double scale = switch (unit.charAt(0)) {
            case 'K' -> 1024.0;
            case 'M' -> 1024.0 * 1024;
            case 'G' -> 1024.0 * 1024 * 1024;
            case 'T' -> 1024.0 * 1024 * 1024 * 1024;
            default -> 1;
        };
        return Math.round(v * scale);
    }

    private static String gib(long bytes) {
        double gib = bytes / (1024.0 * 1024 * 1024);
        return gib >= 1 ? String.format(Locale.ROOT, "%.2f GiB", gib)
                : String.format(Locale.ROOT, "%.0f MiB", bytes / (1024.0 * 1024));
    }

    /** classify's verdicts build their detail through here (or leave it empty): it never holds a null. */
    private static void put(Map<String, Object> detail, String key, Object value) {
        if (value != null) {
            detail.put(key, value);
        }
    }

    private static Long longOrNull(String digits) {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException tooLong) {
            return null;
        }
    }

    static Integer intOrNull(String digits) {
        try {
            return Integer.parseInt(digits);
        } catch (NumberFormatException tooLong) {
            return null;
        }
    }

    private static String clip(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }
}
