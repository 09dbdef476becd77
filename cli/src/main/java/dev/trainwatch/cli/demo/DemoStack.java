package dev.trainwatch.cli.demo;

import dev.trainwatch.cli.watch.LocalStack;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code trainwatch demo}: a real collector in this process fed the synthetic scenarios over loopback HTTP, every demo
 * run marked synthetic; above speed 1 the collector's clock runs faster too.
 */
public final class DemoStack implements AutoCloseable {

    /** Fastest and slowest supported speed: beyond 20× the loopback traffic (about 80 requests per second of
     *  wall time at 20×) stops being cheap on a small machine. */
    public static final double MIN_SPEED = 0.1;
    public static final double MAX_SPEED = 20;

    private final CollectorStack collector;
    private final ScheduledExecutorService feeder;
    private final List<Scenario> scenarios;
    private final TickReporter reporter;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DemoStack(CollectorStack collector, ScheduledExecutorService feeder, List<Scenario> scenarios,
                      TickReporter reporter) {
        this.reporter = reporter;
        this.collector = collector;
        this.feeder = feeder;
        this.scenarios = scenarios;
    }

    /**
     * Starts the collector on {@code config}'s address (a free port when it is taken and {@code freePortIfBusy}) and
     * begins feeding it.
     *
     * @param warnings where a failing tick is reported (one line per distinct problem), and the alert log
     * @throws IllegalArgumentException for a speed out of range or an exposed address without a token
     * @throws CollectorServer.StartException when the address cannot be bound
     * @throws IOException when the collector refuses the scenarios' run specs
     */
    public static DemoStack start(CollectorConfig config, boolean freePortIfBusy, double speed, PrintWriter warnings)
            throws IOException {
        if (!(speed >= MIN_SPEED && speed <= MAX_SPEED)) {
            throw new IllegalArgumentException("--speed must be between " + MIN_SPEED + " and " + MAX_SPEED
                    + ", got " + speed);
        }
        ScaledClock clock = ScaledClock.startingNow(speed);
        // The collector exactly as 'trainwatch collector' runs it: history under --data-dir, alerts to the log.
        CollectorStack collector = LocalStack.startCollector(config.withClock(clock), freePortIfBusy, line -> {
            warnings.println(line);
            warnings.flush();
        });
        CollectorServer server = collector.server();
        ScheduledExecutorService feeder = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "trainwatch-demo-feed");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Scenario> scenarios = Scenario.bundled(Estimator.bundled());
            // Label first, so no demo run is ever visible without its "synthetic" flag.
            scenarios.forEach(s -> server.fleet().markSynthetic(s.runId()));
            HttpDemoSink sink = new HttpDemoSink(server.clientUri(), config.token());
            // The feed speaks in the collector's (scaled) time, so it plays at speed 1 on that clock.
            DemoFeed feed = new DemoFeed(scenarios, sink, 1.0, clock.instant());
            feed.begin();
            feed.tick(clock.instant());
            // One synthetic poll per second of collector time, but never more than ten per second of wall time.
            long periodMillis = Math.max(100, Math.round(1000 / speed));
            TickReporter reporter = new TickReporter(warnings);
            feeder.scheduleAtFixedRate(() -> {
                try {
                    feed.tick(clock.instant());
                    reporter.ok();
                } catch (IOException | RuntimeException e) {
                    reporter.failed(e);
                }
            }, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
            return new DemoStack(collector, feeder, scenarios, reporter);
        } catch (IOException | RuntimeException e) {
            feeder.shutdownNow();
            collector.close();
            throw e;
        }
    }

    public URI pageUri() {
        return collector.server().clientUri();
    }

    public CollectorServer server() {
        return collector.server();
    }

    public List<Scenario> scenarios() {
        return scenarios;
    }

    /** Idempotent; the feed stops (silently: a tick cut short by the stop is no failure) before the collector. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        reporter.stopping();
        feeder.shutdownNow();
        try {
            feeder.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        collector.close();
    }

    /** Says once that feeding fails, and once that it recovered, instead of a line per tick. */
    private static final class TickReporter {
        private final PrintWriter out;
        private String lastProblem;
        private volatile boolean stopping;

        TickReporter(PrintWriter out) {
            this.out = out;
        }

        synchronized void ok() {
            if (lastProblem != null) {
                out.println("trainwatch demo: feeding the collector works again");
                lastProblem = null;
            }
        }

        /** From now on a failed tick is the stop cutting it short, not a problem to report. */
        void stopping() {
            stopping = true;
        }

        synchronized void failed(Exception e) {
            if (stopping) {
                return;
            }
            String problem = Errors.oneLine(e);
            if (!problem.equals(lastProblem)) {
                out.println("trainwatch demo: feeding the collector failed: " + problem);
                lastProblem = problem;
            }
        }
    }
}
