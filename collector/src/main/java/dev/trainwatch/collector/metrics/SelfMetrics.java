package dev.trainwatch.collector.metrics;

import static dev.trainwatch.collector.metrics.MetricNames.HOST;
import static dev.trainwatch.collector.metrics.MetricNames.OUTCOME;

import dev.trainwatch.collector.state.AgentView;
import dev.trainwatch.protocol.AgentHealth;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The monitor's own health: per agent host, when it was last heard from, how long its polls take, its failed reads,
 * spool depth and dropped batches (as it reports them in each batch); and the collector's ingest outcomes and alert
 * deliveries. When several agents report the same host (an agent restarted with a new id), the newest one speaks
 * for it. Thread-safe.
 */
public final class SelfMetrics implements MeterBinder {

    private final Supplier<? extends Collection<AgentView>> agents;
    private final Map<String, Counter> ingest = new HashMap<>();
    private final Map<String, Counter> alerts = new HashMap<>();
    private GaugeFamily<String, AgentView> lastSeen;
    private GaugeFamily<String, AgentView> pollDuration;
    private GaugeFamily<String, AgentView> spoolDepth;
    private final Map<String, FunctionCounter> readErrors = new HashMap<>();
    private final Map<String, FunctionCounter> droppedBatches = new HashMap<>();
    private volatile Map<String, AgentView> current = Map.of();
    private MeterRegistry registry;

    /** @param agents the fleet's current agent views, called once per refresh */
    public SelfMetrics(Supplier<? extends Collection<AgentView>> agents) {
        this.agents = agents;
    }

    @Override
    public synchronized void bindTo(MeterRegistry meterRegistry) {
        this.registry = meterRegistry;
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
        Function<AgentView, Tags> tags = agent -> Tags.of(HOST, LabelValues.sanitize(agent.host()));
        lastSeen = new GaugeFamily<>(meterRegistry, MetricNames.AGENT_LAST_SEEN, MetricNames.SECONDS,
                "Unix time of the agent's newest batch", tags, AgentView::lastSeenTs);
        pollDuration = new GaugeFamily<>(meterRegistry, MetricNames.AGENT_POLL_DURATION, MetricNames.SECONDS,
                "Duration of the agent's last poll of all GPUs", tags,
                agent -> agent.health() == null ? null : agent.health().pollDurationSeconds());
        spoolDepth = new GaugeFamily<>(meterRegistry, MetricNames.AGENT_SPOOL_DEPTH, MetricNames.BATCHES,
                "Batches waiting in the agent's spool", tags,
                agent -> agent.health() == null ? null : agent.health().spoolDepth());
    }

    /**
     * Counts one request to an ingest endpoint.
     *
     * @param outcome one of {@link MetricNames#INGEST_OUTCOMES}; anything else is ignored
     */
    public void ingestOutcome(String outcome) {
        Counter counter = ingest.get(outcome);
        if (counter != null) {
            counter.increment();
        }
    }

    /**
     * Counts one alert notification (for the alert delivery code).
     *
     * @param outcome {@code ok}, {@code retry} or {@code failed}; anything else is ignored
     */
    public void alertDelivery(String outcome) {
        Counter counter = alerts.get(outcome);
        if (counter != null) {
            counter.increment();
        }
    }

    /** Brings the per-host series in line with the fleet's current agents. */
    public synchronized void refresh() {
        if (registry == null) {
            return;
        }
        Map<String, AgentView> byHost = new LinkedHashMap<>();
        for (AgentView agent : agents.get()) {
            byHost.merge(agent.host(), agent, (a, b) -> a.lastSeenTs() >= b.lastSeenTs() ? a : b);
        }
        current = byHost;
        lastSeen.update(byHost);
        pollDuration.update(byHost);
        spoolDepth.update(byHost);
        functionCounters(readErrors, MetricNames.AGENT_READ_ERRORS, "NVML reads that failed on the agent",
                AgentHealth::failedReads);
        functionCounters(droppedBatches, MetricNames.AGENT_DROPPED_BATCHES,
                "Batches the agent dropped because its spool was full", AgentHealth::droppedBatches);
    }

    /**
     * Counters whose value the agent keeps (it sends its running total): a function counter per host reads the
     * newest total, and goes away with the host.
     */
    private void functionCounters(Map<String, FunctionCounter> counters, String name, String description,
                                  Function<AgentHealth, Long> field) {
        for (AgentView agent : current.values()) {
            if (agent.health() != null && field.apply(agent.health()) != null) {
                counters.computeIfAbsent(agent.host(), host -> FunctionCounter
                        .builder(name, host, h -> {
                            AgentView view = current.get(h);
                            Long value = view == null || view.health() == null ? null : field.apply(view.health());
                            return value == null ? Double.NaN : value;
                        })
                        .description(description)
                        .tags(HOST, LabelValues.sanitize(host))
                        .register(registry));
            }
        }
        counters.entrySet().removeIf(entry -> {
            AgentView view = current.get(entry.getKey());
            if (view != null && view.health() != null && field.apply(view.health()) != null) {
                return false;
            }
            registry.remove(entry.getValue());
            return true;
        });
    }

    /** Names of the ingest outcomes, for callers mapping statuses. */
    public static List<String> ingestOutcomes() {
        return MetricNames.INGEST_OUTCOMES;
    }
}
