package dev.trainwatch.collector.alerting;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Writes each anomaly change as one line: the receiver that is always there. From {@value #AGGREGATE_FROM} notices
 * alike (kind, change, severity, hosts) handed over together — a node's outage — one line names a few runs and
 * counts the rest.
 */
public final class LogSink implements AlertSink {
    private final Consumer<String> out;
    private final RunLinks links;

    public LogSink(Consumer<String> out, RunLinks links) {
        this.out = out;
        this.links = links;
    }

    @Override
    public String name() {
        return "log";
    }

    static final int AGGREGATE_FROM = 4;
    static final int RUNS_NAMED = 5;

    @Override
    public int maxBatch() {
        return 4_096; // what is queued at once is written at once, so a flood aggregates
    }

    @Override
    public void deliver(List<AlertNotice> notices) {
        Map<String, List<AlertNotice>> alike = notices.stream()
                .collect(Collectors.groupingBy(LogSink::groupKey, LinkedHashMap::new, Collectors.toList()));
        for (List<AlertNotice> group : alike.values()) {
            if (group.size() >= AGGREGATE_FROM) {
                out.accept(aggregated(group));
                continue;
            }
            for (AlertNotice notice : group) {
                String page = links == null || !notice.firing() ? null : links.runPage(notice.runId());
                out.accept(page == null ? line(notice) : line(notice) + " (" + page + ")");
            }
        }
    }

    private static String groupKey(AlertNotice notice) {
        Object hosts = notice.evidence() == null ? null : notice.evidence().get("hosts");
        return notice.kind() + '|' + notice.firing() + '|' + notice.severityChanged() + '|' + notice.severity()
                + '|' + notice.previousSeverity() + '|' + hosts;
    }

    static String aggregated(List<AlertNotice> group) {
        AlertNotice first = group.get(0);
        List<String> runs = group.stream().map(AlertNotice::runId).toList();
        String named = String.join(", ", runs.subList(0, Math.min(RUNS_NAMED, runs.size())))
                + (runs.size() > RUNS_NAMED ? " and " + (runs.size() - RUNS_NAMED) + " more" : "");
        return line(first).replace(" run=" + first.runId(), " runs=" + runs.size() + " (" + named + ")");
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
