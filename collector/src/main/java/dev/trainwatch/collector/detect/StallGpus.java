package dev.trainwatch.collector.detect;

import static dev.trainwatch.collector.detect.WindowStats.mean;

import dev.trainwatch.collector.detect.GpuSeries.Reading;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Evidence of {@code stalled} from the run's GPUs over the last seconds. NCCL's kernels spin while they wait in a
 * collective: such a GPU reads busy at a fraction of its training power or, where it has activity counters (GPM,
 * NVLink), busy with idle tensor pipes, DRAM and NVLink. A GPU unlike the others — idle while they spin, still
 * computing while they spin, busy at full power while they are idle (stuck in a kernel) — is the rank they wait for.
 */
final class StallGpus {

    /** What one GPU did lately and how it compares with its own power while training; counters NaN without them. */
    record State(String uuid, String host, double util, double powerRatio, double tensor, double dram, double nvlink,
                 DetectorSettings.Stalled.Gpus s) {

        boolean hasCounters() {
            return !Double.isNaN(tensor);
        }

        /** Busy by utilisation, idle by the counters: a kernel that waits (a collective, a busy-wait). */
        boolean spinsByCounters() {
            return util >= s.busy() && hasCounters() && tensor < s.noTensor() && !(dram >= s.noDram())
                    && !(nvlink >= s.noNvlinkBytesPerSecond());
        }

        /** Spinning: by the counters where the GPU has them, else busy at a fraction of its training power. */
        boolean spins() {
            return hasCounters() ? spinsByCounters() : util >= s.busy() && powerRatio < s.lowPowerRatio();
        }

        boolean computes() {
            return util >= s.busy() && hasCounters() && tensor >= s.noTensor();
        }

        boolean idle() {
            return util < s.idle();
        }
    }

    private final DetectorSettings.Stalled.Gpus s;

    StallGpus(DetectorSettings.Stalled.Gpus settings) {
        this.s = settings;
    }

    /** Each fresh GPU's state over the recent seconds (a 30 s mean would still call a GPU idle just after a save). */
    Map<String, State> states(RunContext run, double lastTs) {
        Map<String, State> out = new LinkedHashMap<>();
        double recent = run.now() - s.recent().toMillis() / 1000.0;
        double training = s.trainingPowerWindow().toMillis() / 1000.0;
        for (GpuSeries g : BaseDetector.fresh(run)) {
            double util = mean(g, recent, Reading.UTILIZATION);
            double power = mean(g, recent, run.now() + 1, i -> g.reading(Reading.POWER_WATTS, i));
            double trainingPower = mean(g, lastTs - training, lastTs, i -> g.reading(Reading.POWER_WATTS, i));
            double ratio = trainingPower > 0 && !Double.isNaN(power) ? power / trainingPower : Double.NaN;
            if (!Double.isNaN(util)) {
                out.put(g.uuid(), new State(g.uuid(), g.host(), util, ratio, mean(g, recent, Reading.TENSOR_ACTIVE),
                        mean(g, recent, Reading.DRAM_ACTIVE), mean(g, recent, Reading.NVLINK_BYTES_PER_S), s));
            }
        }
        return out;
    }

    static double meanUtilization(Collection<State> states) {
        return states.isEmpty() ? Double.NaN
                : states.stream().mapToDouble(State::util).reduce(0, Double::sum) / states.size();
    }

    /**
     * The ranks on a GPU unlike the others: idle while more than half spin, still computing while most spin (by the
     * counters), or at full power while more than half are idle; fewer than half of the GPUs, or one of two.
     */
    void culprits(RunContext run, Map<String, State> gpus, List<RankProcess> procs, StallProcesses processes,
            Map<Integer, StallCulprit> out) {
        if (gpus.size() < 2) {
            return;
        }
        Set<Integer> namedByProcess = Set.copyOf(out.keySet());
        List<State> spin = new ArrayList<>();
        List<State> idle = new ArrayList<>();
        List<State> full = new ArrayList<>();
        List<State> notSpinning = new ArrayList<>();
        for (State g : gpus.values()) {
            if (g.idle()) {
                idle.add(g);
            } else if (g.spins()) {
                spin.add(g);
            } else if (g.computes()) {
                notSpinning.add(g);
            } else if (g.util() >= s.busy()) {
                full.add(g);
            }
        }
        notSpinning.addAll(0, idle);
        int n = gpus.size();
        List<State> odd = List.of();
        String why = null;
        if (spin.size() * 2 > n && spin.stream().anyMatch(State::hasCounters) && !notSpinning.isEmpty()
                && (notSpinning.size() * 2 < n || StallCulprit.oneOfTwo(notSpinning.size(), n))) {
            odd = notSpinning; // the counters say who waits and who does not: each says why below
        } else if (!idle.isEmpty() && (spin.size() * 2 > n && idle.size() * 2 < n
                || StallCulprit.oneOfTwo(idle.size(), n) && spin.size() == 1)) {
            odd = idle;
            why = "its GPU is idle while the others are busy at a fraction of their training power (NCCL waiting in "
                    + "a collective it never joined)";
        } else if (!full.isEmpty() && (idle.size() * 2 > n && full.size() * 2 < n
                || StallCulprit.oneOfTwo(full.size(), n) && idle.size() == 1)) {
            odd = full;
            why = "its GPU is still busy at full power while the others are idle (stuck in a kernel)";
        }
        for (State g : odd) {
            String whyThis = why != null ? why : whyByCounters(g, spin);
            for (Map.Entry<Integer, String> e : run.gpuOfRank().entrySet()) {
                if (e.getValue().equals(g.uuid())) {
                    name(e.getKey(), g, whyThis, procs, processes, namedByProcess, n, out);
                }
            }
        }
    }

    private static String whyByCounters(State g, List<State> spin) {
        return g.idle()
                ? String.format(Locale.ROOT, "its GPU is idle while the others spin in a collective (%d GPUs at "
                        + "%s \"utilisation\" with idle tensor pipes and no NVLink traffic)", spin.size(),
                        Texts.pct(meanUtilization(spin)))
                : String.format(Locale.ROOT, "its GPU still computes (tensor pipes %s busy) while the others "
                        + "spin in a collective waiting for it (%d GPUs at %s \"utilisation\" with idle tensor "
                        + "pipes and no NVLink traffic)", Texts.pct(g.tensor()), spin.size(),
                        Texts.pct(meanUtilization(spin)));
    }

    private static void name(int rank, State g, String why, List<RankProcess> procs, StallProcesses processes,
            Set<Integer> namedByProcess, int gpuCount, Map<Integer, StallCulprit> out) {
        RankProcess p = procs.stream().filter(x -> x.rank() == rank).findFirst().orElse(null);
        boolean inIo = p != null && "D".equals(p.state()) && g.idle();
        // A process running right now is working (on the CPU, or its GPU just came back): not hung.
        boolean busyCpu = p != null && g.idle() && processes.busyOnCpu(p) || inIo;
        StallCulprit c = out.get(rank);
        // Two GPUs, one idle and one busy, say only that they differ: when the processes or reports already named a
        // rank, a busy GPU does not name the other one too.
        if (c == null && !namedByProcess.isEmpty() && gpuCount == 2 && !g.idle()) {
            return;
        }
        if (c == null || busyCpu) {
            out.put(rank, new StallCulprit(rank, g.host(), inIo
                    ? "its GPU is idle while its process is in I/O (writing a checkpoint the log does not announce?)"
                    : busyCpu ? "its GPU is idle but its process works on the CPU (a checkpoint save or an evaluation "
                            + "the log does not announce?)" : why, busyCpu));
        } else {
            out.put(rank, new StallCulprit(c.rank(), c.host(), c.why() + "; " + why, false));
        }
    }

    /**
     * The GPUs spinning by their counters, when that is what most GPUs with counters do: "N of M GPUs read X% busy
     * while their tensor pipes are idle …"; else null.
     */
    static String spinningByCounters(Map<String, State> gpus) {
        int withCounters = 0;
        List<State> spin = new ArrayList<>();
        for (State g : gpus.values()) {
            if (g.hasCounters()) {
                withCounters++;
                if (g.spinsByCounters()) {
                    spin.add(g);
                }
            }
        }
        if (spin.isEmpty() || spin.size() * 2 <= withCounters) {
            return null;
        }
        return String.format(Locale.ROOT, "%d of %d GPUs read %s busy while their tensor pipes are idle and NVLink "
                + "carries no data: they spin in a collective, not computing", spin.size(), gpus.size(),
                Texts.pct(meanUtilization(spin)));
    }

    static double meanTensor(Map<String, State> gpus) {
        List<State> counted = gpus.values().stream().filter(State::hasCounters).toList();
        return counted.stream().mapToDouble(State::tensor).reduce(0, Double::sum) / counted.size();
    }

    /** How the other ranks wait, from their GPUs; null when no rank is named or none of the others' GPUs is known. */
    String othersWait(Map<String, State> gpus, Set<Integer> culprits, RunContext run) {
        double util = 0;
        double power = 0;
        int n = 0;
        int powerN = 0;
        int withCounters = 0;
        int spinning = 0;
        for (Map.Entry<Integer, String> e : run.gpuOfRank().entrySet()) {
            State g = culprits.contains(e.getKey()) ? null : gpus.get(e.getValue());
            if (g == null) {
                continue;
            }
            util += g.util();
            n++;
            if (!Double.isNaN(g.powerRatio())) {
                power += g.powerRatio();
                powerN++;
            }
            if (g.hasCounters()) {
                withCounters++;
                spinning += g.spinsByCounters() ? 1 : 0;
            }
        }
        if (n == 0 || culprits.isEmpty()) {
            return null;
        }
        util /= n;
        String text = String.format(Locale.ROOT, "the other ranks' GPUs are %s busy", Texts.pct(util));
        if (powerN > 0) {
            text += String.format(Locale.ROOT, " at %s of their training power", Texts.pct(power / powerN));
        }
        if (withCounters > 0) {
            if (spinning * 2 > withCounters) {
                text += " with idle tensor pipes and no NVLink traffic (spinning in a collective, waiting)";
            }
        } else if (util >= s.busy() && powerN > 0 && power / powerN < s.lowPowerRatio()) {
            text += " (spinning in a collective, waiting)";
        }
        return text;
    }
}
