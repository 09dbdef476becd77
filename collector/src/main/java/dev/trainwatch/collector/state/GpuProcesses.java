package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.GpuSeries.OtherProcess;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which compute processes on a node's GPUs are not their GPU's run's, from one batch's samples and attributions (the
 * agent sends every run of its node in each batch). Only called under the fleet's lock.
 */
final class GpuProcesses {

    private GpuProcesses() {
    }

    /** Sets each sampled GPU's {@link GpuWindow#others}, keeping when each process was first listed there. */
    static void note(List<GpuSample> samples, List<RunAttribution> runs, Registry registry, double now) {
        if (samples == null || runs == null) {
            return;
        }
        Map<Long, String> runOfPid = new HashMap<>();
        for (RunAttribution a : runs) {
            if (a == null || a.runId() == null) {
                continue;
            }
            if (a.pids() != null) {
                a.pids().forEach(pid -> runOfPid.put(pid, a.runId()));
            }
            if (a.ranks() != null) {
                for (RankInfo r : a.ranks()) {
                    if (r != null) {
                        runOfPid.put(r.pid(), a.runId());
                    }
                }
            }
        }
        for (GpuSample s : samples) {
            GpuState g = s == null || s.uuid() == null ? null : registry.gpu(s.uuid());
            if (g != null && g.latest == s) {
                g.window.others = others(s.processes(), runOfPid, g.runId, g.window.others, now);
            }
        }
    }

    /**
     * The processes of {@code listed} that are not {@code runId}'s. None when none of them is the run's: then its
     * processes are not told apart by PID here (an agent in another PID namespace), and every one would look foreign.
     */
    static List<OtherProcess> others(List<GpuProcess> listed, Map<Long, String> runOfPid, String runId,
                                     List<OtherProcess> before, double now) {
        if (listed == null || runId == null
                || listed.stream().noneMatch(p -> p != null && runId.equals(runOfPid.get(p.pid())))) {
            return List.of();
        }
        List<OtherProcess> out = new ArrayList<>();
        for (GpuProcess p : listed) {
            if (p == null || runId.equals(runOfPid.get(p.pid()))) {
                continue;
            }
            double since = before.stream().filter(o -> o.pid() == p.pid()).mapToDouble(OtherProcess::sinceTs)
                    .findFirst().orElse(now);
            double used = p.usedMemoryBytes() != null && p.usedMemoryBytes() >= 0 ? p.usedMemoryBytes() : Double.NaN;
            out.add(new OtherProcess(p.pid(), used, since, runOfPid.get(p.pid())));
        }
        out.sort(Comparator.comparingDouble((OtherProcess o) -> Double.isNaN(o.usedBytes()) ? 0 : -o.usedBytes()));
        return List.copyOf(out);
    }
}
