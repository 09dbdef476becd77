package dev.trainwatch.collector;

import dev.trainwatch.collector.alerting.AlertDispatcher;
import dev.trainwatch.collector.alerting.AlertSink;
import dev.trainwatch.collector.alerting.AlertingListener;
import dev.trainwatch.collector.alerting.AlertmanagerSink;
import dev.trainwatch.collector.alerting.LogSink;
import dev.trainwatch.collector.alerting.RunLinks;
import dev.trainwatch.collector.alerting.WebhookSink;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.history.CalibratingPredictor;
import dev.trainwatch.collector.history.Calibrator;
import dev.trainwatch.collector.history.HistoryException;
import dev.trainwatch.collector.history.HistoryRecorder;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.collector.http.BearerAuth;
import dev.trainwatch.collector.http.HistoryRoutes;
import dev.trainwatch.collector.metrics.HistoryMetrics;
import dev.trainwatch.collector.state.AppliedLedger;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.protocol.MonotonicClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The whole collector as the commands run it: the HTTP server over a fleet whose predictor is calibrated by past
 * runs, the SQLite run history (restored on start), and alert delivery to the log, Alertmanager and a webhook. Every
 * command that runs a collector starts it here, so they behave the same. {@link #close()} is idempotent.
 */
public final class CollectorStack implements AutoCloseable {
    private final CollectorServer server;
    private final HistoryStore history;
    private final AlertDispatcher alerts;
    private final int restoredRuns;

    private CollectorStack(CollectorServer server, HistoryStore history, AlertDispatcher alerts, int restoredRuns) {
        this.server = server;
        this.history = history;
        this.alerts = alerts;
        this.restoredRuns = restoredRuns;
    }

    public static CollectorStack start(CollectorConfig config, Consumer<String> log) {
        return start(config, log, builder -> { });
    }

    /**
     * Starts everything, or nothing: on failure ({@link HistoryException}, {@link CollectorServer.StartException},
     * one line) whatever started is closed again. {@code log} gets alert lines and delivery problems.
     */
    public static CollectorStack start(CollectorConfig config, Consumer<String> log,
                                       Consumer<CollectorServer.Builder> customize) {
        return start(config, log, customize, stack -> { });
    }

    /** {@code lastStep} runs once everything else has started (tests inject a failure there). */
    static CollectorStack start(CollectorConfig config, Consumer<String> log,
                                Consumer<CollectorServer.Builder> customize, Consumer<CollectorStack> lastStep) {
        CalibratingPredictor predictor = new CalibratingPredictor(CollectorServer.estimator(config));
        HistoryStore history = config.dataDir() == null ? null : HistoryStore.openForCollector(config.dataDir());
        AlertDispatcher alerts = null;
        HistoryRecorder recorder = null;
        CollectorServer server = null;
        try {
            if (history != null) {
                predictor.recalibrate(Calibrator.factors(history));
            }
            Fleet fleet = CollectorServer.newFleet(config, predictor);
            if (config.dataDir() != null) {
                // a batch replayed after a restart is dropped
                fleet.keepAppliedIn(AppliedLedger.open(config.dataDir()));
            }

            List<AlertSink> sinks = new ArrayList<>();
            RunLinks links = new RunLinks(config.externalUrl());
            sinks.add(new LogSink(log, links));
            if (config.alertmanagerUrl() != null) {
                sinks.add(new AlertmanagerSink(config.alertmanagerUrl(), links));
            }
            if (config.webhookUrl() != null) {
                sinks.add(new WebhookSink(config.webhookUrl(), links));
            }
            alerts = new AlertDispatcher(sinks, AlertDispatcher.Settings.defaults(), config.clock(), log);
            AlertingListener alerting = new AlertingListener(alerts,
                    () -> MonotonicClock.wallOffsetSeconds(config.clock()));

            CollectorServer.Builder builder = CollectorServer.builder(config).fleet(fleet).listener(alerting);
            // Active anomalies from before a restart, re-announced once the server listens (their links need it).
            List<Map.Entry<String, Anomaly>> restoredAlerts = new ArrayList<>();
            int restored = 0;
            builder.routes(new HistoryRoutes(Optional.ofNullable(history), predictor,
                    new BearerAuth(builder::currentToken), config.clock())::register);
            builder.closeable(alerts);
            builder.closeable(fleet::closeLedger);
            if (history != null) {
                // Summary writes are timed in wall time even when the fleet's clock runs faster (demo --speed).
                recorder = new HistoryRecorder(history, predictor::rawPrediction,
                        outcome -> predictor.recalibrate(Calibrator.factors(history)), HistoryStore.WARNINGS,
                        config.summaryInterval(), MonotonicClock.system());
                restored = recorder.restoreInto(fleet, (runId, anomaly) -> restoredAlerts.add(
                        Map.entry(runId, anomaly)));
                builder.listener(recorder);
                builder.durability(recorder::awaitWritten);
                // Closed in reverse: the fleet sends its pending summaries, the recorder writes them, the database closes.
                builder.closeable(history);
                builder.closeable(recorder);
                builder.closeable(new PendingSummaries(fleet));
            }
            customize.accept(builder);
            server = builder.start();
            links.listening(config.host(), server.port(), server.tls());
            restoredAlerts.forEach(e -> alerting.restored(e.getKey(), e.getValue()));
            if (recorder != null) {
                new HistoryMetrics(recorder.writer()).bindTo(server.metrics().registry());
                recorder.start();
            }
            alerts.onOutcome(server.metrics().self()::alertDelivery);
            CollectorStack stack = new CollectorStack(server, history, alerts, restored);
            lastStep.accept(stack);
            return stack;
        } catch (RuntimeException e) {
            if (server != null) {
                closeQuietly(server, e); // and what the builder was given
            } else {
                closeQuietly(recorder, e);
                closeQuietly(alerts, e);
                closeQuietly(history, e);
            }
            if (server == null || e instanceof CollectorServer.StartException
                    || e instanceof HistoryException) {
                throw e;
            }
            throw new CollectorServer.StartException("the collector stopped again while starting: "
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + oneLine(e.getMessage())), e);
        }
    }

    private static void closeQuietly(AutoCloseable resource, RuntimeException failure) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }

    private static String oneLine(String message) {
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    public CollectorServer server() {
        return server;
    }

    public Fleet fleet() {
        return server.fleet();
    }

    public Optional<HistoryStore> history() {
        return Optional.ofNullable(history);
    }

    public AlertDispatcher alerts() {
        return alerts;
    }

    public int restoredRuns() {
        return restoredRuns;
    }

    @Override
    public void close() {
        server.close(); // closes the dispatcher and the history after the server stopped
    }

    /** On close: the fleet sends the summaries it holds back. */
    private record PendingSummaries(Fleet fleet) implements AutoCloseable {
        @Override
        public void close() {
            fleet.publishChangedSummaries();
        }

        @Override
        public String toString() {
            return "the fleet's pending run summaries";
        }
    }
}
