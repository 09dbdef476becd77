package dev.trainwatch.collector.alerting;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Posts each change of an anomaly, once, to a generic JSON webhook: {@code {"source":"trainwatch","alerts":[{
 * "status":"firing"|"resolved"|"ended_with_run","previous_severity","run_id","kind","severity","starts_at","ends_at",
 * "message","suggestion","evidence","run_url"}]}}, for chat bridges and scripts that do not know Alertmanager.
 */
public final class WebhookSink implements AlertSink {
    private final URI uri;
    private final RunLinks links;
    /** Chat bridges can be slow (a 30-s one was met); a shorter deadline would resend the same alert. */
    public static final Duration DEADLINE = Duration.ofSeconds(90);
    private final HttpJsonPoster poster = new HttpJsonPoster(DEADLINE);

    public WebhookSink(URI uri, RunLinks links) {
        this.uri = uri;
        this.links = links;
    }

    @Override
    public String name() {
        return "webhook";
    }

    @Override
    public void deliver(List<AlertNotice> notices) throws DeliveryException {
        poster.post(uri, body(notices, links));
    }

    static Map<String, Object> body(List<AlertNotice> notices, RunLinks links) {
        List<Map<String, Object>> alerts = new ArrayList<>();
        for (AlertNotice notice : notices) {
            Map<String, Object> alert = new LinkedHashMap<>();
            alert.put("status", notice.firing() ? "firing" : notice.endedWithRun() ? "ended_with_run" : "resolved");
            if (notice.severityChanged()) {
                alert.put("previous_severity", notice.previousSeverity());
            }
            alert.put("run_id", notice.runId());
            alert.put("kind", notice.kind());
            alert.put("severity", notice.severity());
            alert.put("starts_at", notice.startsAt().toString());
            if (notice.endsAt() != null) {
                alert.put("ends_at", notice.endsAt().toString());
            }
            alert.put("message", notice.message());
            if (notice.suggestion() != null) {
                alert.put("suggestion", notice.suggestion());
            }
            if (notice.evidence() != null) {
                alert.put("evidence", notice.evidence());
            }
            String page = links == null ? null : links.runPage(notice.runId());
            if (page != null) {
                alert.put("run_url", page);
            }
            alerts.add(alert);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("source", "trainwatch");
        body.put("alerts", alerts);
        return body;
    }
}
