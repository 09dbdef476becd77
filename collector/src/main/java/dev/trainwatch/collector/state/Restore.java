package dev.trainwatch.collector.state;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.RunContext;
import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.InvalidSpecException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Puts back runs the history kept, after a restart. Only called under the {@link Fleet}'s lock.
 */
final class Restore {
    private static final System.Logger LOG = System.getLogger(FleetLog.NAME);

    private final Registry registry;
    private final Predictor predictor;

    Restore(Registry registry, Predictor predictor) {
        this.registry = registry;
        this.predictor = predictor;
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
