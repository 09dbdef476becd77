package dev.trainwatch.collector.metrics;

import static dev.trainwatch.collector.metrics.MetricNames.OUTCOME;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.HashMap;
import java.util.Map;

/** The collector's own counters: ingest requests and alert deliveries by outcome. Thread-safe. */
public final class SelfMetrics implements MeterBinder {

    private final Map<String, Counter> ingest = new HashMap<>();
    private final Map<String, Counter> alerts = new HashMap<>();

    @Override
    public synchronized void bindTo(MeterRegistry meterRegistry) {
        for (String outcome : MetricNames.INGEST_OUTCOMES) {
            ingest.put(outcome, Counter.builder(MetricNames.INGEST_REQUESTS)
                    .description("Requests to the ingest endpoints by outcome")
                    .tag(OUTCOME, outcome).register(meterRegistry));
        }
        for (String outcome : MetricNames.ALERT_OUTCOMES) {
            alerts.put(outcome, Counter.builder(MetricNames.ALERT_DELIVERIES)
                    .description("Alert notifications by outcome")
                    .tag(OUTCOME, outcome).register(meterRegistry));
        }
    }

    /** Counts one ingest request; an outcome not in {@link MetricNames#INGEST_OUTCOMES} is ignored. */
    public void ingestOutcome(String outcome) {
        count(ingest, outcome);
    }

    /** Counts one alert notification; an outcome not in {@link MetricNames#ALERT_OUTCOMES} is ignored. */
    public void alertDelivery(String outcome) {
        count(alerts, outcome);
    }

    private static void count(Map<String, Counter> counters, String outcome) {
        Counter counter = counters.get(outcome);
        if (counter != null) {
            counter.increment();
        }
    }
}
