package dev.trainwatch.collector.alerting;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Posts to Alertmanager's API v2 ({@code POST /api/v2/alerts}): labels {@code alertname} (Trainwatch + the kind in
 * CamelCase), {@code run_id}, {@code kind}, {@code severity}, {@code source}; annotations {@code summary},
 * {@code description}, {@code suggestion}, {@code run_page}. An alert that ended with its run keeps its labels
 * (routes and silences still match) and says in its annotations that it was not fixed.
 */
public final class AlertmanagerSink implements AlertSink {
    private final URI alertsUri;
    private final RunLinks links;
    private final HttpJsonPoster poster = new HttpJsonPoster(Duration.ofSeconds(30));

    public AlertmanagerSink(URI alertmanagerBase, RunLinks links) {
        String base = alertmanagerBase.toString();
        this.alertsUri = URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
                + "/api/v2/alerts");
        this.links = links;
    }

    @Override
    public String name() {
        return "alertmanager";
    }

    @Override
    public boolean needsResend() {
        return true;
    }

    @Override
    public void deliver(List<AlertNotice> notices) throws DeliveryException {
        poster.post(alertsUri, body(notices));
    }

    List<Map<String, Object>> body(List<AlertNotice> notices) {
        List<Map<String, Object>> alerts = new ArrayList<>(notices.size());
        for (AlertNotice notice : notices) {
            Map<String, Object> labels = new LinkedHashMap<>();
            labels.put("alertname", alertName(notice.kind()));
            labels.put("run_id", notice.runId());
            labels.put("kind", notice.kind());
            labels.put("severity", notice.severity());
            labels.put("source", "trainwatch");
            Map<String, Object> annotations = new LinkedHashMap<>();
            annotations.put("summary", notice.endedWithRun() ? "Unresolved when the run ended: " + notice.message()
                    : notice.message());
            if (notice.endedWithRun()) {
                annotations.put("ended_with_run", "true");
                annotations.put("outcome", AlertNotice.ENDED_WITH_RUN);
            }
            annotations.put("description", describe(notice));
            if (notice.suggestion() != null) {
                annotations.put("suggestion", notice.suggestion());
            }
            String page = links == null ? null : links.runPage(notice.runId());
            if (page != null) {
                annotations.put("run_page", page);
            }
            Map<String, Object> alert = new LinkedHashMap<>();
            alert.put("labels", labels);
            alert.put("annotations", annotations);
            alert.put("startsAt", notice.startsAt().toString());
            if (notice.endsAt() != null) {
                alert.put("endsAt", notice.endsAt().toString());
            }
            if (page != null) {
                alert.put("generatorURL", page);
            }
            if (notice.severityChanged()) {
                // Alertmanager keys alerts by labels: the old severity's alert ends as the new one starts.
                Map<String, Object> oldLabels = new LinkedHashMap<>(labels);
                oldLabels.put("severity", notice.previousSeverity());
                Map<String, Object> ended = new LinkedHashMap<>(alert);
                ended.put("labels", oldLabels);
                ended.put("endsAt", notice.startsAt().toString());
                alerts.add(ended);
            }
            alerts.add(alert);
        }
        return alerts;
    }

    /** {@code data_starvation} → {@code TrainwatchDataStarvation}. */
    static String alertName(String kind) {
        return "Trainwatch" + Arrays.stream(kind.split("_")).filter(part -> !part.isEmpty())
                .map(part -> Character.toUpperCase(part.charAt(0)) + part.substring(1)).collect(Collectors.joining());
    }

    private static String describe(AlertNotice notice) {
        StringBuilder text = new StringBuilder(notice.message() == null ? notice.kind() : notice.message());
        if (notice.evidence() != null && !notice.evidence().isEmpty()) {
            text.append(" Evidence: ");
            notice.evidence().forEach((k, v) -> text.append(k).append('=').append(v).append(' '));
        }
        return text.toString().strip();
    }
}
