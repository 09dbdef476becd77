package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.protocol.MonotonicClock;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * The collector's one Prometheus registry with its binders: GPU, run and self series, plus the JVM's own, read from
 * the fleet's views at scrape time. Thread-safe; scrapes are serialised.
 */
public final class MetricsExporter {

    private final PrometheusMeterRegistry registry;
    private final RunMetrics runMetrics;
    private final SelfMetrics selfMetrics;
    private final AgentMetrics agentMetrics;
    private final List<MeterBinder> extraBinders = new ArrayList<>();

    /** {@code clock} times the step-time summary's window; {@code jvm} adds the JVM's own metrics. */
    public MetricsExporter(Supplier<? extends Collection<GpuView>> gpus,
                           Supplier<? extends Collection<RunView>> runs,
                           Supplier<? extends Collection<AgentView>> agents,
                           java.time.Clock clock, boolean jvm) {
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT,
                new PrometheusRegistry(), micrometerClock(clock));
        // Times the collector keeps on its monotonic clock leave as the wall clock reads them (Prometheus' time()).
        DoubleSupplier wallOffset = () -> MonotonicClock.wallOffsetSeconds(clock);
        this.runMetrics = new RunMetrics(runs, wallOffset);
        this.selfMetrics = new SelfMetrics();
        this.agentMetrics = new AgentMetrics(agents, wallOffset);
        FleetSeries.gpus(gpus).bindTo(registry);
        runMetrics.bindTo(registry);
        selfMetrics.bindTo(registry);
        agentMetrics.bindTo(registry);
        if (jvm) {
            new JvmMemoryMetrics().bindTo(registry);
            new JvmThreadMetrics().bindTo(registry);
            new ProcessorMetrics().bindTo(registry);
            new UptimeMetrics().bindTo(registry);
        }
    }

    private static Clock micrometerClock(java.time.Clock clock) {
        if (clock.equals(java.time.Clock.systemUTC()) || clock.equals(java.time.Clock.systemDefaultZone())
                || clock instanceof MonotonicClock) {
            return Clock.SYSTEM;
        }
        // A fixed or offset clock drives both times, so quantile windows rotate in test time, not wall time.
        return new Clock() {
            @Override
            public long wallTime() {
                return clock.millis();
            }

            @Override
            public long monotonicTime() {
                return TimeUnit.MILLISECONDS.toNanos(clock.millis());
            }
        };
    }

    public synchronized String scrape() {
        return scrape(null);
    }

    public synchronized void refresh() {
        runMetrics.refresh();
    }

    public static String contentType() {
        return "text/plain; version=0.0.4; charset=utf-8";
    }

    public static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    public static boolean wantsOpenMetrics(String accept) {
        return accept != null && accept.toLowerCase(Locale.ROOT).contains("application/openmetrics-text");
    }

    /** OpenMetrics text when {@code accept} names it, else the Prometheus text format. */
    public synchronized String scrape(String accept) {
        return new String(scrapeBytes(accept), StandardCharsets.UTF_8);
    }

    public synchronized byte[] scrapeBytes(String accept) {
        refresh();
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
        try {
            registry.scrape(out, wantsOpenMetrics(accept) ? OPENMETRICS : contentType());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    /** Binds and keeps {@code binder}: function meters hold the object they read weakly. */
    public synchronized void bind(MeterBinder binder) {
        extraBinders.add(binder);
        binder.bindTo(registry);
    }

    /** Registers a client_java collector on {@code registry}, which must be the Prometheus one. */
    static void register(MeterRegistry registry, MultiCollector collector) {
        if (!(registry instanceof PrometheusMeterRegistry prometheus)) {
            throw new IllegalArgumentException("trainwatch's metrics are exported through a PrometheusMeterRegistry only");
        }
        prometheus.getPrometheusRegistry().register(collector);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    public RunMetrics runs() {
        return runMetrics;
    }

    public SelfMetrics self() {
        return selfMetrics;
    }
}
