package dev.trainwatch.collector.detect;

import java.time.Duration;
import java.util.List;

/** What the detectors share: the kind they judge, and the readings they all leave out. */
abstract class BaseDetector implements Detector {

    private final AnomalyKind kind;

    BaseDetector(AnomalyKind kind) {
        this.kind = kind;
    }

    @Override
    public final AnomalyKind kind() {
        return kind;
    }

    /** A GPU whose newest entry is older than a minute tells nothing about now (agent_lost covers that). */
    static boolean stale(RunContext run, GpuSeries g) {
        return g.size() == 0 || run.now() - g.ts(g.size() - 1) > 60;
    }

    /** The run's GPUs that are not {@link #stale}. */
    static List<GpuSeries> fresh(RunContext run) {
        return run.gpus().stream().filter(g -> !stale(run, g)).toList();
    }

    static double seconds(Duration d) {
        return d.toMillis() / 1000.0;
    }
}
