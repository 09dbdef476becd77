package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.exposition.GpuSeries;
import dev.trainwatch.exposition.LabelValues;
import dev.trainwatch.protocol.AgentHealth;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import static dev.trainwatch.collector.metrics.MetricNames.HOST;

/**
 * The {@code trainwatch_agent_*} series, one per agent host, as the agents report their health in each batch; when
 * several agents report one host (restarted with a new id) the newest speaks for it. A snapshot of the fleet's views
 * at each scrape, so a host that goes away has no series at the next one. Thread-safe.
 */
public final class AgentMetrics implements MeterBinder, MultiCollector {

    private record Family(String name, String help, boolean counter, Function<AgentView, Number> reading) {
    }

    private final Supplier<? extends Collection<AgentView>> agents;
    private final List<Family> families = new ArrayList<>();

    /** {@code wallOffset}: seconds the wall clock is ahead of the fleet's, added to the times exported. */
    public AgentMetrics(Supplier<? extends Collection<AgentView>> agents, DoubleSupplier wallOffset) {
        this.agents = agents;
        gauge(MetricNames.AGENT_LAST_SEEN, MetricNames.SECONDS, "Unix time of the agent's newest batch",
                a -> a.lastSeenTs() + wallOffset.getAsDouble());
        gauge(MetricNames.AGENT_POLL_DURATION, MetricNames.SECONDS, "Duration of the agent's last poll of all GPUs",
                health(AgentHealth::pollDurationSeconds));
        gauge(MetricNames.AGENT_SPOOL_DEPTH, MetricNames.BATCHES, "Batches waiting in the agent's spool",
                health(AgentHealth::spoolDepth));
        gauge(MetricNames.AGENT_SPOOL, MetricNames.BYTES, "Bytes waiting in the agent's spool",
                health(AgentHealth::spoolBytes));
        gauge(MetricNames.AGENT_DELIVERY_ALIVE, null,
                "1 while the agent's delivery thread runs, 0 when it has stopped (nothing reaches the collector "
                        + "from its spool)", health(h -> flag(h.deliveryAlive())));
        gauge(MetricNames.AGENT_SPOOL_IN_MEMORY, null,
                "1 while the agent's spool directory cannot be written and shipments wait in memory",
                health(h -> flag(h.spoolInMemory())));
        gauge(MetricNames.AGENT_LOG_READABLE, null,
                "1 when the log the agent follows could be read at its last attempt, 0 when not",
                health(h -> flag(h.logReadable())));
        gauge(MetricNames.AGENT_CLOCK_OFFSET, MetricNames.SECONDS,
                "The agent's clock minus the collector's, from its batches' send times; its time stamps are "
                        + "corrected by it", AgentView::clockOffsetSeconds);
        counter(MetricNames.AGENT_SPOOL_REJECTED,
                "Spool entries the agent moved aside because they could not be replayed (unreadable, corrupt, "
                        + "too big)", health(AgentHealth::rejectedSpoolEntries));
        counter(MetricNames.AGENT_DELIVERY_ERRORS, "Unexpected errors the agent's delivery thread caught and survived",
                health(AgentHealth::deliveryErrors));
        counter(MetricNames.AGENT_READ_ERRORS, "NVML reads that failed on the agent",
                health(AgentHealth::failedReads));
        counter(MetricNames.AGENT_DROPPED_BATCHES, "Batches the agent dropped because its spool was full",
                health(AgentHealth::droppedBatches));
    }

    private void gauge(String name, String unit, String help, Function<AgentView, Number> reading) {
        families.add(new Family(GpuSeries.prometheusName(name, unit), help, false, reading));
    }

    private void counter(String name, String help, Function<AgentView, Number> reading) {
        families.add(new Family(GpuSeries.prometheusName(name, null), help, true, reading));
    }

    private static Function<AgentView, Number> health(Function<AgentHealth, Number> field) {
        return agent -> agent.health() == null ? null : field.apply(agent.health());
    }

    private static Number flag(Boolean value) {
        return value == null ? null : value ? 1 : 0;
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        MetricsExporter.register(meterRegistry, this);
    }

    @Override
    public List<String> getPrometheusNames() {
        return families.stream().map(Family::name).toList();
    }

    @Override
    public MetricSnapshots collect() {
        Map<String, AgentView> byHost = new LinkedHashMap<>();
        for (AgentView agent : agents.get()) {
            byHost.merge(agent.host(), agent, (a, b) -> a.lastSeenTs() >= b.lastSeenTs() ? a : b);
        }
        List<MetricSnapshot> out = new ArrayList<>(families.size());
        for (Family family : families) {
            CounterSnapshot.Builder counter = CounterSnapshot.builder().name(family.name()).help(family.help());
            GaugeSnapshot.Builder gauge = GaugeSnapshot.builder().name(family.name()).help(family.help());
            byHost.forEach((host, agent) -> {
                Number v = family.reading().apply(agent);
                if (v == null || !Double.isFinite(v.doubleValue())) {
                    return;
                }
                Labels labels = Labels.of(HOST, LabelValues.sanitize(host));
                if (family.counter()) {
                    counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels)
                            .value(v.doubleValue()).build());
                } else {
                    gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels)
                            .value(v.doubleValue()).build());
                }
            });
            out.add(family.counter() ? counter.build() : gauge.build());
        }
        return new MetricSnapshots(out);
    }
}
