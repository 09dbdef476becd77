package dev.trainwatch.cli;

import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.ScrapeWarmUp;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.history.HistoryException;
import dev.trainwatch.collector.http.NodeTokens;
import dev.trainwatch.collector.http.TokenFileSource;
import dev.trainwatch.collector.http.tls.ServerTls;
import dev.trainwatch.collector.http.tls.WebConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code trainwatch collector}: runs the collector until SIGTERM/SIGINT. Prints where it listens; a port in use or
 * an unprotected non-loopback address is a one-line error.
 */
@Command(name = "collector", mixinStandardHelpOptions = true,
        description = "Runs the collector: accepts agent batches, step reports and run specs, compares them with the"
                + " estimate, exports /metrics and serves the web page.")
final class CollectorCommand implements Callable<Integer> {

    /** Alert lines and delivery problems, as log records (one line each, in the chosen --log-format). */
    private static final System.Logger ALERT_LOG = System.getLogger("dev.trainwatch.collector.alerts");

    @Spec
    CommandSpec spec;

    @ParentCommand
    TrainwatchCommand parent;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:9477",
            description = "Address to listen on (default: ${DEFAULT-VALUE}). Other than loopback needs --token-file.")
    String listen;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Directory for run and alert history (SQLite).")
    Path dataDir;

    @Option(names = "--summary-interval", paramLabel = "DURATION", defaultValue = "2s",
            description = "With --data-dir: how often at most a run's changed numbers (last step, step time, peak"
                    + " memory) are sent to the history and how often they are written, 0s to 1m (e.g. 500ms, 2s)."
                    + " A SIGKILL loses at most about two intervals of them; SIGTERM loses nothing."
                    + " Default: ${DEFAULT-VALUE}.")
    String summaryInterval;

    @Option(names = "--web-config", paramLabel = "FILE",
            description = "Serve TLS as this Prometheus exporter-toolkit web config says (tls_server_config:"
                    + " cert_file, key_file, client_ca_file, client_auth_type, min_version); the certificates are"
                    + " re-read when they change.")
    Path webConfig;

    @Option(names = "--node-tokens", paramLabel = "FILE",
            description = "Per-node bearer tokens beside --token-file's shared one, a HOST TOKEN pair a line: a batch"
                    + " sent with a node's token may speak only for that host.")
    Path nodeTokens;

    @Mixin
    CollectorOptions collectorOptions = new CollectorOptions();

    /** Counted down to stop a running collector from a test; SIGTERM stops it through the shutdown hook. */
    final CountDownLatch stopRequested = new CountDownLatch(1);
    /** Told about the started server (tests). */
    Consumer<CollectorServer> onStarted = server -> { };

    @Override
    public Integer call() throws InterruptedException {
        CollectorConfig config = config();
        PrintWriter out = spec.commandLine().getOut();
        WebConfig web = webConfig();
        // The token file is re-read when it changes (a rotation needs no restart).
        TokenFileSource tokens = collectorOptions.tokenFile == null ? null
                : TokenFileSource.open(collectorOptions.tokenFile);
        NodeTokens nodes = nodeTokens();
        CollectorStack stack;
        try {
            // The whole collector: history under --data-dir (restored now), calibration, alert delivery.
            stack = CollectorStack.start(config, line -> ALERT_LOG.log(System.Logger.Level.INFO, line), builder -> {
                builder.webConfig(web, ServerTls.DEFAULT_RELOAD_EVERY);
                if (tokens != null) {
                    builder.tokens(tokens);
                }
                builder.nodeTokens(nodes);
            });
        } catch (CollectorServer.StartException | HistoryException e) {
            throw new UserError(ExitCodes.FAILURE, e.getMessage());
        }
        CollectorServer server = stack.server();
        // The first scrapes of a large fleet would otherwise run interpreted; tests that restart collectors turn it off.
        if (Boolean.parseBoolean(System.getProperty("trainwatch.collector.warmUp", "true"))) {
            ScrapeWarmUp.startInBackground();
        }
        TrainwatchCommand.bindLogMetrics(parent, server.metrics().registry());
        if (stack.restoredRuns() > 0) {
            out.println("trainwatch collector restored " + stack.restoredRuns() + " run(s) from " + config.dataDir());
        }
        Thread hook = new Thread(() -> {
            server.close();
            out.println("trainwatch collector stopped");
            out.flush();
            stopRequested.countDown();
        }, "trainwatch-collector-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("trainwatch collector listening on " + server.uri() + " (API /v1, metrics /metrics"
                + (config.token() == null ? "" : ", ingest needs the bearer token") + ")");
        if (!server.tls() && !CollectorConfig.isLoopback(config.host())) {
            out.println(exposureLine(config));
        }
        out.flush();
        onStarted.accept(server);
        try {
            stopRequested.await();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
                server.close();
            } catch (IllegalStateException shuttingDown) {
                // The JVM is already stopping: the hook closes the server.
            }
        }
        return ExitCodes.OK;
    }

    private WebConfig webConfig() {
        try {
            return webConfig == null ? null : WebConfig.read(webConfig);
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--web-config: " + e.getMessage());
        }
    }

    private NodeTokens nodeTokens() {
        if (nodeTokens == null) {
            return NodeTokens.NONE;
        }
        if (collectorOptions.tokenFile == null) {
            throw new UserError(ExitCodes.USAGE, "--node-tokens needs --token-file too (the fleet's shared token)");
        }
        try {
            return NodeTokens.read(nodeTokens);
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--node-tokens: " + e.getMessage());
        }
    }

    /** The one line a collector reachable from other machines without TLS prints at start. */
    static String exposureLine(CollectorConfig config) {
        return "trainwatch collector: " + config.host() + ":" + config.port() + " is plain HTTP: the bearer token,"
                + " every batch and the page cross the network unencrypted and unauthenticated to anyone on it;"
                + " serve TLS with --web-config FILE (docs/DEPLOY.md, \"TLS\")";
    }

    /** The configuration from the options; every mistake is a one-line usage error. */
    CollectorConfig config() {
        return collectorOptions.applyTo(CollectorConfig.defaults().withListen(listen).withDataDir(dataDir)
                .withSummaryInterval(UserError.duration("--summary-interval", summaryInterval, null,
                        CollectorConfig.MAX_SUMMARY_INTERVAL, message -> new UserError(ExitCodes.USAGE, message))));
    }
}
