package dev.trainwatch.collector.alerting;

import java.net.URI;
import java.time.Duration;
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

    /** One alert; a null field is left out. */
    record WebhookAlert(String status, String previousSeverity, String runId, String kind, String severity,
                        String startsAt, String endsAt, String message, String suggestion,
                        Map<String, Object> evidence, String runUrl) {
    }

    record Body(String source, List<WebhookAlert> alerts) {
    }

    static Body body(List<AlertNotice> notices, RunLinks links) {
        return new Body("trainwatch", notices.stream().map(n -> new WebhookAlert(
                n.firing() ? "firing" : n.endedWithRun() ? "ended_with_run" : "resolved",
                n.severityChanged() ? n.previousSeverity() : null, n.runId(), n.kind(), n.severity(),
                n.startsAt().toString(), n.endsAt() == null ? null : n.endsAt().toString(), n.message(),
                n.suggestion(), n.evidence(), links == null ? null : links.runPage(n.runId()))).toList());
    }
}
