package dev.trainwatch.collector.detect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gpu_idle}: one of the run's GPUs has stayed near 0% utilisation for minutes while the run holds it.
 * Only fresh data counts: a GPU whose agent went silent is {@code agent_lost}'s business. Holds before the first
 * step while a phase is announced ({@link StallPhase#beforeFirstStep}).
 */
public final class GpuIdleDetector extends BaseDetector {

    private final DetectorSettings.GpuIdle s;

    public GpuIdleDetector(DetectorSettings settings) {
        super(AnomalyKind.GPU_IDLE);
        this.s = settings.gpuIdle();
    }

    @Override
    public Optional<Finding> evaluate(RunContext run, boolean active) {
        if (StallPhase.beforeFirstStep(run)) {
            return Optional.empty();
        }
        double needed = seconds(s.idleFor());
        if (run.steps().size() == 0) {
            needed *= 3; // loading encoders and data unannounced
        }
        List<GpuSeries> idle = new ArrayList<>();
        double longest = 0;
        int fresh = 0;
        for (GpuSeries g : fresh(run)) {
            fresh++;
            double seconds = WindowStats.idleSeconds(g, s.idleRatio());
            if (seconds >= needed) {
                idle.add(g);
                longest = Math.max(longest, seconds);
            }
        }
        if (idle.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> evidence = new LinkedHashMap<>();
        evidence.put("idle_gpus", idle.size());
        evidence.put("run_gpus", fresh);
        evidence.put("idle_seconds", Math.round(longest));
        evidence.put("idle_threshold_ratio", s.idleRatio());
        evidence.put("gpu_uuids", idle.stream().map(GpuSeries::uuid).toList());
        String which = idle.size() == 1 ? Texts.gpuName(idle.get(0))
                : idle.size() + " of the run's " + fresh + " GPUs";
        String message = String.format(Locale.ROOT, "%s at or below %s utilisation for %s", which,
                Texts.pct(s.idleRatio()), Texts.secs(longest));
        String suggestion = idle.size() == fresh
                ? "the run holds its GPUs without computing: check whether it is hung (py-spy dump --pid PID), "
                        + "waiting in a collective for a missing rank, or finished without exiting; free the GPUs "
                        + "if it is done"
                : "these GPUs are allocated to the run but unused: check that every rank got its device "
                        + "(CUDA_VISIBLE_DEVICES, LOCAL_RANK) or request fewer GPUs";
        return Optional.of(new Finding(Severity.WARNING, message, evidence, suggestion));
    }
}
