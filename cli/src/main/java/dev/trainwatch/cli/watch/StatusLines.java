package dev.trainwatch.cli.watch;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.state.view.ComparisonView;
import dev.trainwatch.collector.state.view.ObservedView;
import dev.trainwatch.collector.state.view.RunView;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** One line per run for the terminal: step, step time and VRAM against predicted, active anomalies. Pure. */
public final class StatusLines {

    private static final double GIB = 1024.0 * 1024 * 1024;

    private StatusLines() {
    }

    /** A line per run, each cut to {@code width} characters (0 = no limit). */
    public static List<String> render(List<RunView> runs, int width) {
        return runs.stream().map(StatusLines::line).map(line -> width > 0 && line.length() > width
                ? line.substring(0, Math.max(0, width - 1)) + "…" : line).toList();
    }

    public static String line(RunView run) {
        ObservedView o = run.observed();
        ComparisonView c = run.comparison();
        StringBuilder b = new StringBuilder(run.runId());
        if (Boolean.TRUE.equals(run.synthetic())) {
            b.append(" [synthetic]");
        }
        if (run.ended()) {
            b.append(" [ended]");
        }
        b.append("  step ").append(o == null || o.lastStep() == null ? "–" : o.lastStep());
        b.append("  ").append(seconds(o == null ? null : o.stepSeconds())).append("/step");
        Double predictedStep = c == null ? null : c.predictedStepSeconds();
        if (predictedStep != null) {
            b.append(" (predicted ").append(seconds(predictedStep));
            if (c.stepTimeRatio() != null) {
                b.append(String.format(Locale.ROOT, ", ×%.2f", c.stepTimeRatio()));
            }
            b.append(')');
        }
        Long used = o == null ? null : (o.peakMemoryBytes() != null ? o.peakMemoryBytes() : o.memoryUsedBytes());
        b.append("  VRAM ").append(gib(used));
        Long predictedPeak = c == null ? null : c.predictedPeakMemoryBytes();
        if (predictedPeak != null) {
            b.append(" (predicted ").append(gib(predictedPeak)).append(')');
        }
        Long capacity = c != null && c.capacityBytes() != null ? c.capacityBytes() : o == null ? null : o.memoryTotalBytes();
        if (capacity != null) {
            b.append(" of ").append(gib(capacity));
        }
        // An anomaly that ended with the run was not fixed: the run's last line says so, never "ok".
        List<Anomaly> active = run.anomalies() == null ? List.of()
                : run.anomalies().stream().filter(a -> a.active() || a.endedWithRun()).toList();
        if (active.isEmpty()) {
            b.append("  ok");
        } else {
            b.append("  ").append(active.stream()
                    .map(a -> a.kind().wireName() + (a.severity() == Severity.CRITICAL ? " (critical)" : "")
                            + (a.endedWithRun() ? " (unresolved at the end)" : ""))
                    .collect(Collectors.joining(", ")));
        }
        return b.toString();
    }

    static String seconds(Double s) {
        if (s == null) {
            return "– s";
        }
        return String.format(Locale.ROOT, s < 10 ? "%.2f s" : "%.1f s", s);
    }

    static String gib(Long bytes) {
        return bytes == null ? "–" : String.format(Locale.ROOT, "%.1f GiB", bytes / GIB); // not "VRAM – GiB"
    }
}
