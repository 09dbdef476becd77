package dev.trainwatch.collector.alerting;

import java.util.List;
import java.util.function.Consumer;

/** Writes each anomaly change as one line (to stderr by default): the receiver that is always there. */
public final class LogSink implements AlertSink {
    private final Consumer<String> out;
    private final RunLinks links;

    public LogSink(Consumer<String> out) {
        this(out, null);
    }

    /** @param links links to each run's page, appended to firing lines */
    public LogSink(Consumer<String> out, RunLinks links) {
        this.out = out;
        this.links = links;
    }

    @Override
    public String name() {
        return "log";
    }

    @Override
    public void deliver(List<AlertNotice> notices) {
        for (AlertNotice notice : notices) {
            String page = links == null || !notice.firing() ? null : links.runPage(notice.runId());
            out.accept(page == null ? line(notice) : line(notice) + " (" + page + ")");
        }
    }

    static String line(AlertNotice notice) {
        StringBuilder line = new StringBuilder("trainwatch alert ");
        if (notice.severityChanged()) {
            line.append("CHANGED ").append(notice.previousSeverity()).append("->");
        } else {
            line.append(notice.firing() ? "FIRING" : notice.endedWithRun() ? "UNRESOLVED" : "RESOLVED").append(' ');
        }
        line.append(notice.severity()).append(' ')
                .append(notice.kind()).append(" run=").append(notice.runId());
        if (notice.endedWithRun()) {
            line.append(": ").append(AlertNotice.ENDED_WITH_RUN);
        }
        if (notice.message() != null) {
            line.append(notice.endedWithRun() ? " — " : ": ").append(notice.message());
        }
        if (notice.firing() && notice.suggestion() != null) {
            line.append(" — ").append(notice.suggestion());
        }
        return line.toString();
    }
}
