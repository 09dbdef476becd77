package dev.trainwatch.collector;

import dev.trainwatch.collector.alerting.RunLinks;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.http.ApiVerticle;
import dev.trainwatch.collector.http.BearerAuth;
import dev.trainwatch.collector.http.NodeTokens;
import dev.trainwatch.collector.http.tls.ServerTls;
import dev.trainwatch.collector.http.tls.WebConfig;
import dev.trainwatch.collector.metrics.DetectorMetrics;
import dev.trainwatch.collector.metrics.FleetSeries;
import dev.trainwatch.collector.metrics.LimitMetrics;
import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.state.Predictor;
import dev.trainwatch.collector.state.view.GpuView;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.CatalogException;
import dev.trainwatch.protocol.Errors;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.ext.web.Router;
import java.net.BindException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A running collector: the fleet state, its metrics and the HTTP server over them, plus a timer that calls
 * {@link Fleet#tick()} so time-based detectors (stalled, agent_lost) fire without new input. Thread-safe; the
 * methods block until done.
 */
public final class CollectorServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(CollectorServer.class.getName());
    private static final long START_TIMEOUT_SECONDS = 30;

    private final CollectorConfig config;
    private final Vertx vertx;
    private final boolean ownsVertx;
    private final Fleet fleet;
    private final MetricsExporter metrics;
    private final ApiVerticle verticle;
    private final List<AutoCloseable> closeables;
    private final long tickTimer;
    private final boolean tls;
    private volatile boolean closed;

    private CollectorServer(CollectorConfig config, Vertx vertx, boolean ownsVertx, Fleet fleet,
                            MetricsExporter metrics, ApiVerticle verticle, List<AutoCloseable> closeables,
                            boolean tls) {
        this.config = config;
        this.tls = tls;
        this.vertx = vertx;
        this.ownsVertx = ownsVertx;
        this.fleet = fleet;
        this.metrics = metrics;
        this.verticle = verticle;
        this.closeables = closeables;
        this.tickTimer = vertx.setPeriodic(config.tickInterval().toMillis(), id ->
                vertx.executeBlocking(() -> {
                    fleet.tick();
                    return null;
                }, true).onFailure(e -> LOG.log(System.Logger.Level.WARNING, "fleet tick failed", e)));
    }

    public static CollectorServer start(CollectorConfig config, List<FleetListener> listeners) {
        Builder builder = builder(config);
        listeners.forEach(builder::listener);
        return builder.start();
    }

    public static Builder builder(CollectorConfig config) {
        return new Builder(config);
    }

    public int port() {
        return verticle.actualPort();
    }

    public URI uri() {
        String host = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
        return URI.create((tls ? "https" : "http") + "://" + host + ":" + port());
    }

    public boolean tls() {
        return tls;
    }

    /** The address a client on this machine reaches, ending in {@code /}; a wildcard address becomes loopback. */
    public URI clientUri() {
        return clientUri(config.host(), port(), tls);
    }

    static URI clientUri(String host, int port, boolean tls) {
        return RunLinks.address(host, port, tls, () -> "127.0.0.1");
    }

    public Fleet fleet() {
        return fleet;
    }

    public MetricsExporter metrics() {
        return metrics;
    }

    public Vertx vertx() {
        return vertx;
    }

    /** Stops the timer and the server, then closes the registered resources in reverse order. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        vertx.cancelTimer(tickTimer);
        try {
            Future<?> stopped = ownsVertx ? vertx.close() : verticle.stop();
            await(stopped);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "collector did not stop cleanly: " + e.getMessage());
        }
        // What listeners were not told yet reaches them before the resources they write to close.
        fleet.stopDelivery(Duration.ofSeconds(10));
        for (int i = closeables.size() - 1; i >= 0; i--) {
            AutoCloseable closeable = closeables.get(i);
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, "closing " + closeable + " failed: " + e.getMessage());
            }
        }
    }

    public static final class Builder {
        private final CollectorConfig config;
        private final List<FleetListener> listeners = new ArrayList<>();
        private final List<Consumer<Router>> routes = new ArrayList<>();
        private final List<AutoCloseable> closeables = new ArrayList<>();
        private Fleet fleet;
        private Vertx vertx;
        private boolean jvmMetrics = true;
        private WebConfig webConfig;
        private Supplier<String> tokens;
        private NodeTokens nodeTokens = NodeTokens.NONE;
        private Duration tlsReloadEvery = ServerTls.DEFAULT_RELOAD_EVERY;
        private Function<Duration, Boolean> durability = timeout -> true;

        private Builder(CollectorConfig config) {
            this.config = Objects.requireNonNull(config, "config");
        }

        public Builder listener(FleetListener listener) {
            listeners.add(Objects.requireNonNull(listener));
            return this;
        }

        /** Routes added after the API's own; one that repeats an API path is never reached. */
        public Builder routes(Consumer<Router> addRoutes) {
            routes.add(Objects.requireNonNull(addRoutes));
            return this;
        }

        /** The one wait (bounded) until what listeners were told is on disk; a spec PUT answers after it. */
        public Builder durability(Function<Duration, Boolean> await) {
            durability = Objects.requireNonNull(await);
            return this;
        }

        public Builder closeable(AutoCloseable closeable) {
            closeables.add(Objects.requireNonNull(closeable));
            return this;
        }

        /** Uses this fleet instead of a new one over the bundled estimator; its clock should be the config's. */
        public Builder fleet(Fleet existing) {
            this.fleet = existing;
            return this;
        }

        public Builder vertx(Vertx existing) {
            this.vertx = existing;
            return this;
        }

        /** TLS when {@code config} has {@code tls_server_config}, its certificates re-read every {@code reloadEvery}. */
        public Builder webConfig(WebConfig config, Duration reloadEvery) {
            this.webConfig = config;
            this.tlsReloadEvery = Objects.requireNonNull(reloadEvery, "reloadEvery");
            return this;
        }

        /** Checks writes against the token {@code current} gives at each request instead of the config's. */
        public Builder tokens(Supplier<String> current) {
            this.tokens = Objects.requireNonNull(current, "current");
            return this;
        }

        /** A batch with a node's token may speak only for that node. */
        public Builder nodeTokens(NodeTokens nodes) {
            this.nodeTokens = Objects.requireNonNull(nodes, "nodes");
            return this;
        }

        public String currentToken() {
            return tokens != null ? tokens.get() : config.token();
        }

        public Builder jvmMetrics(boolean enabled) {
            this.jvmMetrics = enabled;
            return this;
        }

        /** Starts listening; {@link StartException} (one line) when the address cannot be bound. */
        public CollectorServer start() {
            config.checkExposure();
            Fleet theFleet = fleet != null ? fleet : newFleet(config, Predictor.of(estimator(config)));
            theFleet.gpuHourPrices(config.gpuHourPrices());
            listeners.forEach(theFleet::addListener);
            // Listeners write to disk and networks: on the fleet's own thread, no request waits for them.
            theFleet.deliverOnOwnThread();
            Supplier<Collection<GpuView>> gpus = config.exportsGpuSeries() ? theFleet::gpus : List::of;
            MetricsExporter metrics = new MetricsExporter(gpus, theFleet::runs, theFleet::agents, config.clock(),
                    jvmMetrics);
            theFleet.addListener(metrics.runs());
            metrics.bind(new LimitMetrics(theFleet::limits));
            metrics.bind(new DetectorMetrics(theFleet::detectorErrors, theFleet::detectorCosts));
            metrics.bind(FleetSeries.hosts(theFleet::hostMemory));
            boolean owns = vertx == null;
            // epoll where Netty's native library loads (fewer objects and system calls), else NIO silently.
            Vertx theVertx = owns ? Vertx.vertx(new VertxOptions().setPreferNativeTransport(true)) : vertx;
            boolean tls = webConfig != null && webConfig.tls() != null;
            ApiVerticle verticle = new ApiVerticle(config, theFleet, metrics, routes, durability,
                    new BearerAuth(this::currentToken, nodeTokens),
                    tls ? new ServerTls(webConfig.tls(), tlsReloadEvery) : null);
            try {
                await(theVertx.deployVerticle(verticle));
            } catch (Exception e) {
                if (owns) {
                    try {
                        await(theVertx.close());
                    } catch (Exception ignored) {
                        // the start error is what the user needs to see
                    }
                }
                throw new StartException(describeStartFailure(config, e));
            }
            return new CollectorServer(config, theVertx, owns, theFleet, metrics, verticle, List.copyOf(closeables),
                    tls);
        }
    }

    static Fleet newFleet(CollectorConfig config, Predictor predictor) {
        return new Fleet(predictor, config.clock(), fleetSettings(config), DetectorSettings.defaults());
    }

    /** The bundled catalogs plus the config's user catalogs; a wrong entry is a one-line {@link StartException}. */
    public static Estimator estimator(CollectorConfig config) {
        try {
            return Estimator.withUserCatalogs(config.userCatalogs());
        } catch (CatalogException e) {
            throw new StartException(e.getMessage());
        }
    }

    /** The default windows with the config's caps and summary interval (with or without history). */
    public static FleetSettings fleetSettings(CollectorConfig config) {
        CollectorConfig.Limits limits = config.limits();
        return FleetSettings.defaults().withSummaryInterval(config.summaryInterval())
                .withCaps(limits.maxRuns(), limits.maxGpus(), limits.maxAgents(), limits.maxSpecs());
    }

    private static String describeStartFailure(CollectorConfig config, Exception e) {
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        String where = config.host() + ":" + config.port();
        if (cause instanceof BindException || String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT)
                .contains("address already in use")) {
            return "cannot listen on " + where + ": address already in use (another collector running?"
                    + " pick another port with --listen)";
        }
        return "cannot listen on " + where + ": " + Errors.oneLine(cause);
    }

    private static <T> T await(Future<T> future) throws Exception {
        try {
            return future.toCompletionStage().toCompletableFuture().get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new TimeoutException("timed out after " + START_TIMEOUT_SECONDS + " s");
        }
    }

    /** The collector could not start; the message is one line for the user. */
    public static final class StartException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public StartException(String message) {
            super(message);
        }

        public StartException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
