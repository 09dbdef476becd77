package dev.trainwatch.collector.metrics;

import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.protocol.MonotonicClock;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
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
 * The collector's one Prometheus registry with its binders: GPU, run and self series, plus the JVM's own. The
 * gauges read the fleet's views; {@link #scrape()} first brings the set of series in line with the fleet, then
 * renders. Thread-safe; scrapes are serialised.
 */
public final class MetricsExporter {

    private final PrometheusMeterRegistry registry;
    private final GpuMetrics gpuMetrics;
    private final RunMetrics runMetrics;
    private final SelfMetrics selfMetrics;
    private final AgentMetrics agentMetrics;
    private final List<MeterBinder> extraBinders = new ArrayList<>();

    /**
     * @param gpus    the fleet's GPU views
     * @param runs    the fleet's run views
     * @param agents  the fleet's agent views
     * @param clock   time for the step-time summary's window (inject a fixed clock in tests)
     * @param jvm     also export the JVM's memory, thread, CPU and uptime metrics
     */
    public MetricsExporter(Supplier<? extends Collection<GpuView>> gpus,
                           Supplier<? extends Collection<RunView>> runs,
                           Supplier<? extends Collection<AgentView>> agents,
                           java.time.Clock clock, boolean jvm) {
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT,
                new PrometheusRegistry(), micrometerClock(clock));
        this.gpuMetrics = new GpuMetrics(gpus);
        // Times the collector keeps on its monotonic clock leave as the wall clock reads them (Prometheus' time()).
        DoubleSupplier wallOffset = () -> MonotonicClock.wallOffsetSeconds(clock);
        this.runMetrics = new RunMetrics(runs, wallOffset);
        this.selfMetrics = new SelfMetrics();
        this.agentMetrics = new AgentMetrics(agents, wallOffset);
        gpuMetrics.bindTo(registry);
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

    /** The Prometheus text exposition of everything, current as of this call. */
    public synchronized String scrape() {
        return scrape(null);
    }

    /** Brings the series in line with the fleet without rendering (benchmarks and tests). */
    public synchronized void refresh() {
        runMetrics.refresh();
    }

    /** The content type of {@link #scrape()}. */
    public static String contentType() {
        return "text/plain; version=0.0.4; charset=utf-8";
    }

    /** The content type of OpenMetrics text ({@link #scrape(String)} when the scraper asks for it). */
    public static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    /** Whether an {@code Accept} header asks for OpenMetrics text (as Prometheus does by default). */
    public static boolean wantsOpenMetrics(String accept) {
        return accept != null && accept.toLowerCase(Locale.ROOT).contains("application/openmetrics-text");
    }

    /**
     * The exposition in the format the {@code Accept} header asks for: OpenMetrics text when it names it, else the
     * Prometheus text format; the content type to answer with is {@link #OPENMETRICS} or {@link #contentType()}.
     */
    public synchronized String scrape(String accept) {
        return new String(scrapeBytes(accept), StandardCharsets.UTF_8);
    }

    /** {@link #scrape(String)} as UTF-8 bytes, as sent (no string in between). */
    public synchronized byte[] scrapeBytes(String accept) {
        refresh();
        // client_java's own text writers, through the registry (a hand-written writer was 1-2% of the collector's
        // CPU at 1,024 GPUs: under the project's 10% rule for second copies; docs/PERFORMANCE.md).
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
        try {
            registry.scrape(out, wantsOpenMetrics(accept) ? OPENMETRICS : contentType());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    /**
     * Binds another binder to the registry and keeps it: binders whose meters read the binder itself (gauges and
     * function counters hold their object weakly) must outlive the call.
     */
    public synchronized void bind(MeterBinder binder) {
        extraBinders.add(binder);
        binder.bindTo(registry);
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

    public GpuMetrics gpus() {
        return gpuMetrics;
    }
}
