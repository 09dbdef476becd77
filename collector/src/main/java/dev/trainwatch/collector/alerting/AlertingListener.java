package dev.trainwatch.collector.alerting;

import static dev.trainwatch.protocol.MonotonicClock.toInstant;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.FleetListener;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.DoubleSupplier;

/**
 * Turns the fleet's anomaly changes into alert notices for the {@link AlertDispatcher}; a change of severity is one
 * notice naming the severity it replaces. Thread-safe (restores may come from another thread).
 */
public final class AlertingListener implements FleetListener {
    private final AlertDispatcher dispatcher;
    private final Map<String, AlertNotice> firing = new HashMap<>();
    private final DoubleSupplier wallOffset;

    /** {@code wallOffset}: seconds the wall clock is ahead of the fleet's; notices leave in receivers' time. */
    public AlertingListener(AlertDispatcher dispatcher, DoubleSupplier wallOffset) {
        this.dispatcher = dispatcher;
        this.wallOffset = wallOffset;
    }

    @Override
    public boolean notifiesPeople() {
        return true;
    }

    @Override
    public boolean wantsRunChanges() {
        return false;
    }

    @Override
    public synchronized void onAnomalyRaised(String runId, Anomaly anomaly) {
        AlertNotice notice = toNotice(runId, anomaly);
        AlertNotice previous = firing.put(notice.key(), notice);
        if (previous != null && !previous.severity().equals(notice.severity())) {
            dispatcher.publish(notice.changedFrom(previous.severity()));
            return;
        }
        dispatcher.publish(notice);
    }

    @Override
    public synchronized void onAnomalyResolved(String runId, Anomaly anomaly) {
        AlertNotice notice = toNotice(runId, anomaly);
        if (firing.remove(notice.key()) == null) {
            return; // never announced (raised while its run was not yet seen training): nothing to take back
        }
        Instant at = anomaly.resolvedAt() != null ? toInstant(anomaly.resolvedAt() + wallOffset.getAsDouble())
                : Instant.now();
        dispatcher.publish(anomaly.endedWithRun() ? notice.endedWithRunAt(at) : notice.resolvedAt(at));
    }

    /** Re-announces an anomaly active before a restart to receivers that would let it lapse (Alertmanager). */
    public synchronized void restored(String runId, Anomaly anomaly) {
        if (anomaly.active()) {
            AlertNotice notice = toNotice(runId, anomaly);
            firing.put(notice.key(), notice);
            dispatcher.republish(notice);
        }
    }

    AlertNotice toNotice(String runId, Anomaly anomaly) {
        return new AlertNotice(runId, anomaly.kind().wireName(), anomaly.severity().wireName(),
                toInstant(anomaly.since() + wallOffset.getAsDouble()), null, anomaly.message(), anomaly.suggestion(),
                anomaly.evidence(), null, false);
    }
}
