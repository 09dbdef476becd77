package dev.trainwatch.collector.detect;

import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.protocol.MonotonicClock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Processes on a run's GPU that are not the run's (another job, a notebook, an inference server left running): the
 * memory they hold is gone for the run, and a GPU's memory in use counts it. Named in {@code oom_risk} and
 * {@code memory_above_estimate} with their PID, how much and since when; those of another watched run are that run's
 * (a GPU shared by design) and are never blamed on this one.
 */
final class SharedGpu {

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private SharedGpu() {
    }

    /** The processes on {@code g} of no watched run holding at least the settings' minimum, largest first. */
    static List<OtherProcess> strangers(GpuSeries g, DetectorSettings.SharedGpu s) {
        return g.otherProcesses().stream().filter(p -> p.runId() == null && p.usedBytes() >= s.minBytes()).toList();
    }

    /** Device memory {@code ps} hold (a process NVML cannot tell counts nothing). */
    static double bytes(List<OtherProcess> ps) {
        return ps.stream().mapToDouble(OtherProcess::usedBytes).filter(b -> !Double.isNaN(b)).sum();
    }

    /** "pid 4242 holds 7.5 GiB since 04:12:05 UTC" for each, joined. */
    static String describe(List<OtherProcess> ps) {
        return ps.stream().map(p -> String.format(Locale.ROOT, "pid %d%s holds %s since %s", p.pid(),
                p.runId() == null ? "" : " (run " + p.runId() + ")", Texts.gib(p.usedBytes()),
                CLOCK.format(MonotonicClock.toInstant(p.sinceTs())))).collect(Collectors.joining(", "));
    }

    /** The evidence entry: each process's pid, bytes, first-seen time and run (when watched). */
    static List<Map<String, Object>> evidence(List<OtherProcess> ps) {
        return ps.stream().map(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("pid", p.pid());
            m.put("memory_used_bytes", Math.round(p.usedBytes()));
            m.put("since", Texts.round(p.sinceTs(), 3));
            if (p.runId() != null) {
                m.put("run_id", p.runId());
            }
            return m;
        }).toList();
    }

    /** The fix that comes first when strangers hold memory the run needs. */
    static String fix(GpuSeries g, List<OtherProcess> ps) {
        return String.format(Locale.ROOT, "free %s on %s: stop %s or move %s to another GPU (nvidia-smi lists it)",
                Texts.gib(bytes(ps)), Texts.gpuName(g), ps.size() == 1 ? "pid " + ps.get(0).pid() : "those processes",
                ps.size() == 1 ? "it" : "them");
    }
}
