package dev.trainwatch.collector.alerting;

import java.util.List;

/**
 * A receiver of alert notices (Alertmanager, a webhook, the log). Called from the dispatcher's single delivery
 * thread only, never from ingest.
 */
public interface AlertSink {

    /** A short name for logs and metrics, e.g. {@code alertmanager}. */
    String name();

    /**
     * Delivers notices. Throws {@link DeliveryException} when the receiver did not take them; the dispatcher then
     * retries with backoff. Must not block longer than its own timeout.
     */
    void deliver(List<AlertNotice> notices) throws DeliveryException;

    /**
     * Whether active alerts must be re-sent periodically to stay active (Alertmanager resolves an alert that is
     * not re-sent within its {@code resolve_timeout}); receivers of one-shot events say false.
     */
    default boolean needsResend() {
        return false;
    }

    /** The most notices handed over in one {@link #deliver} call (one request to a remote receiver). */
    default int maxBatch() {
        return 64;
    }
}
