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
    private final List<GaugeFamily<String, AgentView>> healthGauges = new java.util.ArrayList<>();
    private final Map<String, FunctionCounter> rejectedEntries = new java.util.HashMap<>();
    private final Map<String, FunctionCounter> deliveryErrors = new java.util.HashMap<>();
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
        // The agent's own health (issue 19): present for agents that report it.
        healthGauges.add(new GaugeFamily<>(meterRegistry, MetricNames.AGENT_SPOOL, MetricNames.BYTES,
                "Bytes waiting in the agent's spool", tags,
                agent -> agent.health() == null ? null : agent.health().spoolBytes()));
        healthGauges.add(new GaugeFamily<>(meterRegistry, MetricNames.AGENT_DELIVERY_ALIVE, null,
                "1 while the agent's delivery thread runs, 0 when it has stopped (nothing reaches the collector "
                        + "from its spool)", tags,
                agent -> agent.health() == null ? null : flag(agent.health().deliveryAlive())));
        healthGauges.add(new GaugeFamily<>(meterRegistry, MetricNames.AGENT_SPOOL_IN_MEMORY, null,
                "1 while the agent's spool directory cannot be written and shipments wait in memory", tags,
                agent -> agent.health() == null ? null : flag(agent.health().spoolInMemory())));
        healthGauges.add(new GaugeFamily<>(meterRegistry, MetricNames.AGENT_LOG_READABLE, null,
                "1 when the log the agent follows could be read at its last attempt, 0 when not", tags,
                agent -> agent.health() == null ? null : flag(agent.health().logReadable())));
        healthGauges.add(new GaugeFamily<>(meterRegistry, MetricNames.AGENT_CLOCK_OFFSET, MetricNames.SECONDS,
                "The agent's clock minus the collector's, from its batches' send times; its time stamps are "
                        + "corrected by it", tags, AgentView::clockOffsetSeconds));
    }

    private static Number flag(Boolean value) {
        return value == null ? null : value ? 1 : 0;
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
        for (GaugeFamily<String, AgentView> gauge : healthGauges) {
            gauge.update(byHost);
        }
        functionCounters(rejectedEntries, MetricNames.AGENT_SPOOL_REJECTED,
                "Spool entries the agent moved aside because they could not be replayed (unreadable, corrupt, "
                        + "too big)", AgentHealth::rejectedSpoolEntries);
        functionCounters(deliveryErrors, MetricNames.AGENT_DELIVERY_ERRORS,
                "Unexpected errors the agent's delivery thread caught and survived", AgentHealth::deliveryErrors);
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
