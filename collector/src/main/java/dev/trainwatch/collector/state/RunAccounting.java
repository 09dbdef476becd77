package dev.trainwatch.collector.state;

import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.StepEvent;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Where a run's time and energy went, accumulated as readings arrive: the goodput ledger (each second of wall time
 * in exactly one {@link Reason}; the rules are docs/API.md's "Goodput"), GPU-seconds and energy. The ledger is
 * closed up to the newest step report; the time since is {@link Reason#PENDING} up to the allowance, then a gap.
 * Guarded by the fleet's lock.
 */
final class RunAccounting {

    /** The goodput parts; {@code label} is the {@code reason} label of {@code trainwatch_run_wall_seconds_total}. */
    enum Reason {
        PRODUCTIVE, STARTUP, DATA_WAIT, ENCODING, STALL, CHECKPOINT, EVALUATION, LOST_WORK, IDLE,
        /** Since the newest report, not yet explained (at most the allowance); not exported as a counter. */
        PENDING;

        final String label = name().toLowerCase(Locale.ROOT);
    }

    static final double MIN_JITTER_SECONDS = 30;
    /** A gap between reports up to this (or half the usual span) is the reports' own jitter. */
    static final double JITTER_SECONDS = 10;
    /** A GPU-sample gap longer than this is not counted as GPU time (the agent was away). */
    static final double MAX_SAMPLE_GAP_SECONDS = 120;
    /** Energy counter increments above this mean power are readings from another counter (driver reload). */
    private static final double MAX_PLAUSIBLE_WATTS = 3000;
    private static final double IDLE_UTILIZATION = 0.10;

    private final double start;
    private final EnumMap<Reason, Double> closed = new EnumMap<>(Reason.class);
    /** Wall time is closed up to here (the newest report's time). */
    private double closedUntil;
    private boolean anyReport;
    private long lastStep = -1;
    private long maxStep = -1;
    /** Steps up to this one are repeats of work done before a restart. */
    private long redoUntil = -1;
    /** Typical seconds a report covers (exponentially smoothed), NaN before the first. */
    private double typicalSpan = Double.NaN;
    /** Utilisation of the run's GPUs since {@link #closedUntil}: sum and count of samples. */
    private double gapUtilSum;
    private int gapUtilN;
    /** The phase the agent announced since {@link #closedUntil}, and when it started. */
    private Reason phase;
    private double phaseStart = Double.NaN;

    private final Map<String, double[]> lastByGpu = new HashMap<>();
    private double gpuSeconds;
    private double energyJoules;
    private boolean energyKnown;

    RunAccounting(double start) {
        this.start = start;
        this.closedUntil = start;
    }

    // ------------------------------------------------------------------ GPU readings

    /** One sample of a GPU attributed to the run, at {@code ts}. */
    void gpuSample(String uuid, GpuSample s, double ts) {
        double[] last = lastByGpu.get(uuid);
        double energy = s.energyJoules() != null && Double.isFinite(s.energyJoules()) ? s.energyJoules()
                : Double.NaN;
        double power = s.powerWatts() != null && Double.isFinite(s.powerWatts()) && s.powerWatts() >= 0
                ? s.powerWatts() : Double.NaN;
        if (last != null) {
            double dt = ts - last[0];
            if (dt > 0 && dt <= MAX_SAMPLE_GAP_SECONDS) {
                gpuSeconds += dt;
                double delta = energy - last[1];
                if (delta >= 0 && delta <= MAX_PLAUSIBLE_WATTS * dt) {
                    energyJoules += delta;
                    energyKnown = true;
                } else if (!Double.isNaN(power)) {
                    energyJoules += power * dt;
                    energyKnown = true;
                }
            }
            if (dt <= 0) {
                return; // a replayed or reordered sample: keep the newest
            }
        }
        if (last == null) {
            lastByGpu.put(uuid, new double[] {ts, energy});
        } else {
            last[0] = ts;
            last[1] = energy;
        }
        if (s.utilizationRatio() != null && Double.isFinite(s.utilizationRatio()) && ts > closedUntil) {
            gapUtilSum += s.utilizationRatio();
            gapUtilN++;
        }
    }

    /** The GPU left the run (or was forgotten): its next sample starts a new stretch. */
    void gpuLeft(String uuid) {
        lastByGpu.remove(uuid);
    }

    double gpuSeconds() {
        return gpuSeconds;
    }

    /** Joules the run's GPUs used while attributed to it; NaN when no GPU reported energy or power. */
    double energyJoules() {
        return energyKnown ? energyJoules : Double.NaN;
    }

    // ------------------------------------------------------------------ phases and steps

    /** The agent announced a checkpoint, evaluation or sampling phase starting at {@code ts}. */
    void phase(String kind, double ts) {
        Reason r = switch (kind == null ? "" : kind) {
            case "checkpoint", "checkpoint_saved" -> Reason.CHECKPOINT;
            case "evaluation", "sampling" -> Reason.EVALUATION;
            default -> null;
        };
        if (r != null && ts >= closedUntil) {
            phase = r;
            // "Saved checkpoint" is printed after the save: the pause since the newest report was the save.
            phaseStart = "checkpoint_saved".equals(kind) ? closedUntil : ts;
        }
    }

    /**
     * A step report counted as the run's (see {@link Fleet#ingestSteps}), at {@code ts}.
     *
     * @param encodingPerStep seconds of each step's data time that is online encoding by the prediction (PixArt's
     *                        data time includes it); 0 when features are precomputed or the log splits it out
     */
    void step(StepEvent e, double ts, double encodingPerStep) {
        if (!(ts > closedUntil)) {
            return; // older than what the ledger closed: already explained
        }
        long step = e.step();
        int k;
        if (e.intervalSteps() != null && e.intervalSteps() > 0) {
            k = e.intervalSteps();
        } else if (lastStep >= 0 && step > lastStep) {
            k = (int) Math.min(Integer.MAX_VALUE, step - lastStep);
        } else {
            k = 1;
        }
        // A step that goes back after a pause is a restart; without one it is a counter that restarts by itself
        // (a per-epoch progress bar), and the training goes on.
        boolean restart = anyReport && step < lastStep && ts - closedUntil > allowance() + k * e.timeS();
        if (restart) {
            redoUntil = Math.max(redoUntil, maxStep);
        }
        double span = k * e.timeS();
        double elapsed = ts - closedUntil;
        double allowance = allowance();
        Reason gapReason = !anyReport || restart ? Reason.STARTUP : null;
        if (!anyReport && step > k + 1 && !restart && step * e.timeS() > ts - start) {
            // Attached to a run already training: the time before the first report was steps like this report's.
            span = elapsed;
        }
        double gap = elapsed - span;
        // Jitter (logging, a slow step the smoothed time hides) is the report's own; never more than the tail
        // could have called a gap before this report arrived (see wallSeconds), so counters only grow.
        double typical = Double.isNaN(typicalSpan) ? span : typicalSpan;
        double jitter = gapReason != null ? 0
                : Math.max(0, Math.min(Math.max(JITTER_SECONDS, 0.5 * typical), allowance - span));
        if (gap <= jitter) {
            span = elapsed; // the report explains all of it
            gap = 0;
        }
        if (gap > 0) {
            closeGap(closedUntil, ts - span, gapReason);
        }
        split(e, span, k, step, encodingPerStep);
        closedUntil = ts;
        typicalSpan = Double.isNaN(typicalSpan) ? k * e.timeS() : 0.8 * typicalSpan + 0.2 * k * e.timeS();
        anyReport = true;
        lastStep = step;
        maxStep = Math.max(maxStep, step);
        gapUtilSum = 0;
        gapUtilN = 0;
        phase = null;
        phaseStart = Double.NaN;
    }

    private double allowance() {
        return Double.isNaN(typicalSpan) ? MIN_JITTER_SECONDS : Math.max(MIN_JITTER_SECONDS, 2 * typicalSpan);
    }

    /** Splits {@code seconds} ending at a report over data wait, encoding and productive (or lost) work. */
    private void split(StepEvent e, double seconds, int k, long step, double encodingPerStep) {
        double perStep = e.timeS();
        double data = nz(e.dataTimeS());
        double encoding = nz(e.lmTimeS()) + nz(e.vaeTimeS());
        if (encoding == 0 && encodingPerStep > 0) {
            encoding = Math.min(data, encodingPerStep);
            data -= encoding;
        }
        double dataShare = Math.min(1, data / perStep);
        double encodingShare = Math.min(1 - dataShare, encoding / perStep);
        double work = seconds * (1 - dataShare - encodingShare);
        add(Reason.DATA_WAIT, seconds * dataShare);
        add(Reason.ENCODING, seconds * encodingShare);
        long first = step - k + 1;
        long repeated = redoUntil < first ? 0 : Math.min(k, redoUntil - first + 1);
        double lost = work * repeated / k;
        add(Reason.LOST_WORK, lost);
        add(Reason.PRODUCTIVE, work - lost);
    }

    private void closeGap(double from, double to, Reason forced) {
        gapParts(from, to, forced).forEach(this::add);
    }

    /** How the gap [from, to) splits: an announced phase from its start, the rest stall or idle (or forced). */
    private Map<Reason, Double> gapParts(double from, double to, Reason forced) {
        Map<Reason, Double> out = new EnumMap<>(Reason.class);
        if (!(to > from)) {
            return out;
        }
        double rest = to - from;
        if (phase != null && phaseStart < to) {
            double inPhase = to - Math.max(from, phaseStart);
            out.merge(phase, inPhase, Double::sum);
            rest -= inPhase;
        }
        if (rest > 0) {
            Reason r = forced != null ? forced
                    : gapUtilN > 0 && gapUtilSum / gapUtilN < IDLE_UTILIZATION ? Reason.IDLE : Reason.STALL;
            out.merge(r, rest, Double::sum);
        }
        return out;
    }

    private void add(Reason r, double seconds) {
        if (seconds > 0) {
            closed.merge(r, seconds, Double::sum);
        }
    }

    /**
     * Wall time split by reason up to {@code until} (now, or when the run ended): the closed ledger and the time
     * since the newest report, which is {@link Reason#PENDING} up to the allowance and a gap beyond it. The values
     * sum to {@code until - start}.
     */
    Map<Reason, Double> wallSeconds(double until) {
        EnumMap<Reason, Double> out = new EnumMap<>(closed);
        double tail = until - closedUntil;
        if (tail > 0) {
            if (!anyReport) {
                out.merge(Reason.STARTUP, tail, Double::sum);
            } else {
                double allowance = allowance();
                double pending = Math.min(tail, allowance);
                out.merge(Reason.PENDING, pending, Double::sum);
                gapParts(closedUntil, until - pending, null).forEach((r, s) -> out.merge(r, s, Double::sum));
            }
        }
        return out;
    }

    /**
     * Productive seconds over wall seconds up to {@code until}; NaN before the first step report (a run whose log is
     * not read has no goodput, rather than a goodput of zero).
     */
    double goodput(double until) {
        if (!anyReport) {
            return Double.NaN;
        }
        Map<Reason, Double> parts = wallSeconds(until);
        double wall = until - start;
        return wall > 0 ? parts.getOrDefault(Reason.PRODUCTIVE, 0.0) / wall : Double.NaN;
    }

    double start() {
        return start;
    }

    private static double nz(Double v) {
        return v == null || !Double.isFinite(v) || v < 0 ? 0 : v;
    }
}
