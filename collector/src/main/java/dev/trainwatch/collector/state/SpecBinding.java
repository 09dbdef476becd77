package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Binds run specs to runs: registration under the run's id or another of its names, the GPU and data-parallel size
 * filled from what the agents report, the spec of a run registered before the agent reported it moved to the run the
 * agent reports, and runs the history kept put back after a restart. Only called under the {@link Fleet}'s lock.
 */
final class SpecBinding {
    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);

    private final Registry registry;
    private final Predictor predictor;
    private final EvaluationSchedule events;

    SpecBinding(Registry registry, Predictor predictor, EvaluationSchedule events) {
        this.registry = registry;
        this.predictor = predictor;
        this.events = events;
    }

    /** Registers (or replaces) a run's spec; returns the run it now belongs to, or throws, changing nothing. */
    RunState put(String runId, RunSpec spec, double now) {
        RunState existing = registry.run(runId);
        String target = registry.aliasTarget(runId);
        if (existing == null && registry.run(target) != null) {
            // The spec names the run by another of its names (its SLURM_JOB_ID, its TORCHELASTIC_RUN_ID,
            // host:pid): it belongs to the run the agent reports.
            runId = target;
            existing = registry.run(target);
        }
        RunSpec filled = existing == null ? spec : fillFromObservation(existing, spec);
        Estimate estimate = predictor.estimate(filled); // may throw: nothing changed yet
        registry.makeRoomForSpec(runId, now); // may refuse (429): a spec is never accepted, then forgotten for room
        RunState run = registry.runOrCreate(runId, now);
        run.bindSpec(spec, estimate, spec.gpu() == null && filled.gpu() != null);
        run.seen(now);
        events.notifyChanged(run, now);
        events.evaluate(run, now);
        return run;
    }

    /** A spec registered under another name of this run moves to it, and the spec-only run goes. */
    void adoptSpecOf(String alias, RunState run, double now) {
        RunState specOnly = registry.run(alias);
        if (specOnly == null || specOnly == run || specOnly.registeredSpec() == null || Slots.observed(specOnly)) {
            return;
        }
        if (run.registeredSpec() == null) {
            RunSpec filled = fillFromObservation(run, specOnly.registeredSpec());
            try {
                run.bindSpec(specOnly.registeredSpec(), predictor.estimate(filled),
                        specOnly.registeredSpec().gpu() == null && filled.gpu() != null);
            } catch (InvalidSpecException e) {
                LOG.log(System.Logger.Level.WARNING, "run {0}: the spec registered as {1} is not priced: {2}",
                        run.runId(), alias, e.getMessage());
                return;
            }
            events.notifyChanged(run, now);
        }
        LOG.log(System.Logger.Level.INFO, "run {0} is also known as {1}: the spec registered under {1} now applies to it",
                run.runId(), alias);
        registry.forget(specOnly);
    }

    /** Fills the spec's GPU from the NVML name of the run's GPUs, and its size from their count. */
    RunSpec fillFromObservation(RunState run, RunSpec spec) {
        RunSpec filled = spec;
        int attributed = run.gpuUuids().size();
        if (spec.gpus() == null && attributed > 0) {
            filled = filled.onHardware(null, attributed, null);
        }
        // A family name ("a100") that the catalog finds ambiguous is settled by what NVML says the run's GPUs are
        // ("NVIDIA A100-SXM4-80GB" -> a100-80gb): their memory decides, never a silent pick.
        String family = spec.gpu() != null && predictor.resolveGpuId(spec.gpu()).isEmpty()
                ? spec.gpu().strip().toLowerCase(Locale.ROOT) + "-" : null;
        if (spec.gpu() == null || family != null) {
            for (String uuid : run.gpuUuids()) {
                GpuState g = registry.gpu(uuid);
                if (g != null && g.window.name() != null) {
                    Optional<String> id = predictor.resolveGpuId(g.window.name());
                    if (id.isPresent() && (family == null || id.get().startsWith(family))) {
                        filled = filled.onHardware(id.get(), null, null);
                        break;
                    }
                }
            }
        }
        return filled;
    }

    /** A spec registered before the run's GPUs were known gets its GPU once they are. */
    void maybeFillGpu(RunState run) {
        if (run.registeredSpec() == null || run.registeredSpec().gpu() != null || run.gpuFilledFromObservation()) {
            return;
        }
        RunSpec filled = fillFromObservation(run, run.registeredSpec());
        if (filled.gpu() == null) {
            return;
        }
        try {
            run.gpuFilled(predictor.estimate(filled));
        } catch (InvalidSpecException e) {
            run.gpuFilled(null); // do not retry on every batch
            LOG.log(System.Logger.Level.WARNING, "run {0}: spec with observed GPU {1} not priced: {2}",
                    run.runId(), filled.gpu(), e.getMessage());
        }
    }

    /** See {@link Fleet#restoreRun}. */
    void restore(RunSummary summary, double now) {
        if (registry.run(summary.runId()) != null) {
            return;
        }
        RunState run;
        try {
            run = registry.runOrCreate(summary.runId(), Math.min(now, summary.firstSeenTs()));
        } catch (LimitReachedException e) {
            LOG.log(System.Logger.Level.WARNING, "not restoring run {0}: {1}", summary.runId(), e.getMessage());
            return;
        }
        Estimate priced = null;
        if (summary.spec() != null) {
            try {
                priced = predictor.estimate(summary.spec());
            } catch (InvalidSpecException e) {
                LOG.log(System.Logger.Level.WARNING, "restored run {0}: spec not priced: {1}",
                        summary.runId(), e.getMessage());
            }
        }
        run.restore(summary, priced, now);
        if (summary.anomalies() != null) {
            // An ended run's anomalies ended with it (kept as such), except run_failed, which is why it ended.
            run.tracker().restore(summary.anomalies().stream()
                    .filter(a -> !summary.ended() || !a.active() || a.kind() == AnomalyKind.RUN_FAILED).toList(),
                    now);
            if (!summary.ended()) {
                summary.anomalies().stream()
                        .filter(a -> a.active() && a.kind() == AnomalyKind.XID_ERROR)
                        .forEach(a -> run.restoredXids().addAll(xidsOf(a)));
            }
        }
    }

    /** The XIDs an {@code xid_error} anomaly's evidence names, stamped with its newest XID's time. */
    private static List<RunContext.XidRecord> xidsOf(Anomaly anomaly) {
        Map<String, Object> evidence = anomaly.evidence();
        double ts = evidence.get("newest_ts") instanceof Number n ? n.doubleValue() : anomaly.since();
        List<String> uuids = new ArrayList<>();
        if (evidence.get("gpu_uuids") instanceof List<?> list) {
            list.forEach(u -> uuids.add(String.valueOf(u)));
        }
        String uuid = uuids.isEmpty() ? null : uuids.get(0);
        List<RunContext.XidRecord> out = new ArrayList<>();
        if (evidence.get("xids") instanceof List<?> xids) {
            for (Object xid : xids) {
                if (xid instanceof Number n) {
                    out.add(new RunContext.XidRecord(ts, null, uuid, n.longValue()));
                }
            }
        }
        return out;
    }
}
