package dev.trainwatch.collector.alerting;

import java.util.List;

/** A receiver of alert notices, called from its own delivery thread only, never from ingest. */
public interface AlertSink {

    String name();

    /** Must not block longer than its own timeout; a retryable {@link DeliveryException} is retried with backoff. */
    void deliver(List<AlertNotice> notices) throws DeliveryException;

    /** Whether active alerts must be re-sent to stay active (Alertmanager's {@code resolve_timeout}). */
    default boolean needsResend() {
        return false;
    }

    default int maxBatch() {
        return 64;
    }
}
