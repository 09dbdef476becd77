package dev.trainwatch.cli.watch;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.RunView;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * For output that is not a terminal (a log file, a pipe): one line when an anomaly is raised or resolved, instead
 * of status lines redrawn in place. Not thread-safe; one caller.
 */
public final class AnomalyLog {

    private Set<String> active = new HashSet<>();

    /** Lines for what changed since the previous call. */
    public List<String> changes(List<RunView> runs) {
        List<String> lines = new ArrayList<>();
        Set<String> now = new HashSet<>();
        for (RunView run : runs) {
            if (run.anomalies() == null) {
                continue;
            }
            for (Anomaly a : run.anomalies()) {
                if (!a.active()) {
                    continue;
                }
                String key = run.runId() + "\u0000" + a.kind().wireName() + "\u0000" + a.severity().wireName();
                now.add(key);
                if (!active.contains(key)) {
                    lines.add("trainwatch: " + run.runId() + ": " + a.kind().wireName() + " (" + a.severity().wireName()
                            + "): " + a.message() + (a.suggestion() == null ? "" : " | what to do: " + a.suggestion()));
                }
            }
        }
        for (String key : active) {
            if (!now.contains(key)) {
                String[] parts = key.split("\u0000");
                lines.add("trainwatch: " + parts[0] + ": " + parts[1] + " resolved");
            }
        }
        active = now;
        return lines;
    }
}
